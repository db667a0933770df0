package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The wait before Ratis' transfer starts: only an answer given after the call began counts. */
class TransferCatchUpTest {
    private static RaftNode.Status leaderSeeing(long matchIndex, long contactMs) {
        return new RaftNode.Status("n1", "LEADER", "n1", 1, 1000, 1000, Map.of("n2", matchIndex), Map.of("n2", contactMs));
    }

    /**
     * A follower stopped a moment before the call last answered a few ms ago and matches every entry:
     * it looked caught up, and Ratis' transfer to it refused writes for the whole timeout (CI).
     */
    @Test
    void aFollowerWhoseLastAnswerCameBeforeTheCallIsNotCaughtUp() {
        long lastAnswer = System.nanoTime() - Duration.ofMillis(5).toNanos();
        IOException e = assertThrows(IOException.class, () -> Membership.awaitCaughtUp("n2", Duration.ofMillis(300),
                () -> leaderSeeing(1000, (System.nanoTime() - lastAnswer) / 1_000_000)));
        assertTrue(e.getMessage().contains("has not answered the leader") && e.getMessage().contains("writes were not stopped"),
                e.getMessage());
    }

    @Test
    void aFollowerAnsweringAfterTheCallBeganAndCaughtUpIsReady() {
        assertDoesNotThrow(() -> Membership.awaitCaughtUp("n2", Duration.ofSeconds(5), () -> leaderSeeing(1000, 0)));
    }

    @Test
    void aFollowerAnsweringButFarBehindIsNotReady() {
        IOException e = assertThrows(IOException.class,
                () -> Membership.awaitCaughtUp("n2", Duration.ofMillis(200), () -> leaderSeeing(0, 0)));
        assertTrue(e.getMessage().contains("1000 committed entries behind"), e.getMessage());
    }
}
