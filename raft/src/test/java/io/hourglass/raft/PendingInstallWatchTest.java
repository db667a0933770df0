package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
final class PendingInstallWatchTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private final PendingInstallWatch watch = new PendingInstallWatch("n3", Duration.ofSeconds(5));

    @Test
    void aCheckpointWaitingForTheTimeoutMakesTheNodeAskTheLeaderItKnowsThenOncePerRetryPeriod() {
        assertNull(watch.overdue(null, "n1", 0), "nothing downloaded");
        assertNull(watch.overdue("n1", "n1", SECOND), "the wait starts");
        assertNull(watch.overdue("n1", "n1", 5 * SECOND), "not before the timeout");
        assertEquals("n1", watch.overdue("n1", "n1", 6 * SECOND));
        assertEquals(1, watch.asks());
        assertNull(watch.overdue("n1", "n1", 20 * SECOND), "asked again no sooner than six timeouts later");
        assertEquals("n1", watch.overdue("n1", "n1", 36 * SECOND));
        assertEquals(2, watch.asks());
    }

    @Test
    void withNoLeaderKnownTheOneThatNotifiedIsAsked() {
        watch.overdue("n1", null, 0);
        assertEquals("n1", watch.overdue("n1", null, 5 * SECOND));
    }

    @Test
    void aLeaderElectedMeanwhileIsAskedRatherThanTheOneThatNotified() {
        watch.overdue("n1", null, 0);
        assertEquals("n2", watch.overdue("n1", "n2", 5 * SECOND));
    }

    @Test
    void anInstalledCheckpointStartsTheClockOverForTheNextOne() {
        watch.overdue("n1", "n1", 0);
        assertNull(watch.overdue(null, "n1", 4 * SECOND), "installed");
        assertNull(watch.overdue("n2", "n2", 6 * SECOND), "a new download starts a new wait");
        assertNull(watch.overdue("n2", "n2", 10 * SECOND));
        assertEquals("n2", watch.overdue("n2", "n2", 11 * SECOND));
    }

    @Test
    void aFollowerAnsweringANextIndexBeforeTheLogStartKeepsItSoThatItIsNotified() {
        // Ratis' choice: the old match index + 1 (30646), which the leader's log holds.
        assertEquals(0, InstallNudgingAppender.nextIndexForInconsistency(24_223, 0, 30_646), "wiped or installing");
        assertEquals(20_000, InstallNudgingAppender.nextIndexForInconsistency(24_223, 20_000, 30_646));
        assertEquals(30_646, InstallNudgingAppender.nextIndexForInconsistency(24_223, 24_223, 30_646),
                "at the start: the log holds what it needs");
        assertEquals(30_646, InstallNudgingAppender.nextIndexForInconsistency(0, 0, 30_646),
                "a log never purged sends entries, no checkpoint");
    }

    /**
     * Chaos run: a follower began installing on the old leader's notice (that log started at 25 074);
     * the new leader's log started at 14 277, and every notification naming 14 277 failed on the
     * follower ("inProgressInstallSnapshotRequest: 25074 is not eligible"). Once nudged, a follower
     * is told this log's next index, past every former leader's start.
     */
    @Test
    void aNudgedFollowerIsToldThisLogsNextIndexAsTheFirstAvailableEntry() {
        org.apache.ratis.server.protocol.TermIndex start = org.apache.ratis.server.protocol.TermIndex.valueOf(10, 14_277);
        assertEquals(start, InstallNudgingAppender.firstAvailable(start, false, 17, 28_925), "not nudged: Ratis' choice");
        assertEquals(org.apache.ratis.server.protocol.TermIndex.valueOf(17, 28_925),
                InstallNudgingAppender.firstAvailable(start, true, 17, 28_925));
        assertNull(InstallNudgingAppender.firstAvailable(null, true, 17, 28_925), "nothing to notify");
    }
}
