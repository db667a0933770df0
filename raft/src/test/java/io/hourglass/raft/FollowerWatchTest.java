package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
final class FollowerWatchTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private final FollowerWatch watch = new FollowerWatch("n1", Duration.ofSeconds(30));

    @Test
    void aFollowerWhoseMatchIndexDoesNotMoveWhileBehindIsStalledAfterTheTimeout() {
        watch.observe(Map.of("n2", 100L, "n3", 100L), 120, 0);
        watch.observe(Map.of("n2", 100L, "n3", 110L), 130, 29 * SECOND);
        assertEquals(Set.of(), watch.stalled(), "not before the timeout");
        watch.observe(Map.of("n2", 100L, "n3", 130L), 140, 30 * SECOND);
        assertEquals(Set.of("n2"), watch.stalled());
    }

    @Test
    void aFollowerThatIsCaughtUpIsNeverStalledEvenWhenNothingIsWritten() {
        watch.observe(Map.of("n2", 100L), 100, 0);
        watch.observe(Map.of("n2", 100L), 100, 300 * SECOND);
        assertEquals(Set.of(), watch.stalled());
    }

    @Test
    void progressEndsAStallAndRestartsTheClock() {
        watch.observe(Map.of("n2", 100L), 200, 0);
        watch.observe(Map.of("n2", 100L), 200, 31 * SECOND);
        assertEquals(Set.of("n2"), watch.stalled());
        watch.observe(Map.of("n2", 101L), 200, 32 * SECOND);
        assertEquals(Set.of(), watch.stalled());
        watch.observe(Map.of("n2", 101L), 200, 61 * SECOND);
        assertEquals(Set.of(), watch.stalled(), "the clock restarted at the last progress");
        watch.observe(Map.of("n2", 101L), 200, 62 * SECOND);
        assertEquals(Set.of("n2"), watch.stalled());
    }

    @Test
    void aRemovedFollowerAndALostLeadershipForgetEverything() {
        watch.observe(Map.of("n2", 100L, "n3", 100L), 200, 0);
        watch.observe(Map.of("n2", 100L, "n3", 100L), 200, 31 * SECOND);
        assertEquals(Set.of("n2", "n3"), watch.stalled());
        watch.observe(Map.of("n2", 100L), 200, 32 * SECOND);
        assertEquals(Set.of("n2"), watch.stalled());
        watch.reset();
        assertEquals(Set.of(), watch.stalled());
    }
}
