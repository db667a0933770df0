package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
final class LostLogWatchTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private final LostLogWatch watch = new LostLogWatch("n3", Duration.ofSeconds(5));

    @Test
    void aLogThatDoesNotGrowWhileTheLeaderIsHeardIsLookedUpAfterTheTimeoutAndOnceATimeout() {
        assertNull(watch.suspect("n1", 100, -1, false, 0));
        assertNull(watch.suspect("n1", 100, -1, false, 4 * SECOND), "not before the timeout");
        assertEquals("n1", watch.suspect("n1", 100, -1, false, 5 * SECOND));
        assertNull(watch.suspect("n1", 100, -1, false, 6 * SECOND), "one look-up per timeout");
        assertEquals("n1", watch.suspect("n1", 100, -1, false, 10 * SECOND));
    }

    @Test
    void aLeaderThatOnlySendsAHeartbeatEverySixSecondsStillCountsAsSending() {
        // What a Ratis leader does to a follower that refuses its appends: a heartbeat every 5–7 s.
        long[] contactAges = {100, 1_350, 2_600, 3_850, 5_100, 6_350, 500, 1_750, 3_000, 4_250, 5_500};
        String looked = null;
        for (int i = 0; i < contactAges.length && looked == null; i++) {
            looked = watch.suspect("n1", contactAges[i], -1, false, i * 1_250 * SECOND / 1_000);
        }
        assertEquals("n1", looked, "looked up within the timeout and a tick, though the contact age passed it");
    }

    @Test
    void aStallOfThisProcessRestartsTheClock() {
        // A follower resumed after a 10 s SIGSTOP looks before the leader's next append can reach it:
        // the pause is no news of the leader, and it once asked a healthy leader to step down.
        LostLogWatch ticking = new LostLogWatch("n3", Duration.ofSeconds(5), Duration.ofSeconds(2));
        assertNull(ticking.suspect("n1", 100, 7, false, 0));
        assertNull(ticking.suspect("n1", 100, 7, false, SECOND));
        assertNull(ticking.suspect("n1", 10_000, 7, false, 11 * SECOND), "the first look after the stall");
        assertNull(ticking.suspect("n1", 100, 7, false, 12 * SECOND), "the clock started over at the stall");
        for (long s = 13; s < 16; s++) {
            assertNull(ticking.suspect("n1", 100, 7, false, s * SECOND));
        }
        assertEquals("n1", ticking.suspect("n1", 100, 7, false, 16 * SECOND), "a timeout after the stall");
    }

    @Test
    void aLeaderForgottenBetweenHeartbeatsDoesNotRestartTheClock() {
        // A wiped follower refusing every append times out between the leader's heartbeats, 5-7 s
        // apart, and knows no leader until the next one: seen on real processes, it never asked.
        assertNull(watch.suspect("n1", 100, -1, false, 0));
        assertNull(watch.suspect(null, 0, -1, false, 2 * SECOND));
        assertNull(watch.suspect("n1", 300, -1, false, 3 * SECOND));
        assertNull(watch.suspect(null, 0, -1, false, 4 * SECOND));
        assertEquals("n1", watch.suspect("n1", 200, -1, false, 5 * SECOND));
    }

    @Test
    void growthASilentLeaderOrAnInstallRestartTheClock() {
        watch.suspect("n1", 100, 10, false, 0);
        assertNull(watch.suspect("n1", 100, 11, false, 5 * SECOND), "the log grew");
        assertNull(watch.suspect("n1", 21_000, 11, false, 10 * SECOND), "the leader was not heard from lately");
        assertNull(watch.suspect("n1", 100, 11, true, 15 * SECOND), "a checkpoint is being installed");
        assertNull(watch.suspect("n1", 100, 11, false, 19 * SECOND));
        assertEquals("n1", watch.suspect("n1", 100, 11, false, 20 * SECOND));
    }

    @Test
    void onlyALeaderThatRemembersMoreOfThisLogThanItHasIsAskedToStepDownAndNotAgainSoon() {
        watch.suspect("n1", 100, 13, false, 0);
        assertEquals("n1", watch.suspect("n1", 100, 13, false, 5 * SECOND));
        assertFalse(watch.starved("n1", 13, 13, 13, 5 * SECOND), "an idle healthy follower: the leader committed its log's end");
        assertFalse(watch.starved("n1", 40, 12, 13, 5 * SECOND),
                "stuck for another reason: the leader knows no more of this log than it has");
        assertTrue(watch.starved("n1", 40, 30, 13, 10 * SECOND), "the leader remembers this node at 30, its log ends at 13");
        assertEquals(1, watch.asks());
        assertFalse(watch.starved("n1", 40, 30, 13, 20 * SECOND), "not again within " + LostLogWatch.RETRY_FACTOR + " timeouts");
        assertTrue(watch.starved("n1", 40, 30, 13, 40 * SECOND));
        assertEquals(2, watch.asks());
    }

    @Test
    void anEmptyLogUnderALeaderThatCommittedEntriesIsStarvedEvenWhenTheLeaderNeverHeardItsCommitIndex() {
        // A node wiped right after its group was made: the leader matched its first entry but never
        // learned its commit index, and sends from past the entry the empty log lacks.
        watch.suspect("n1", 100, -1, false, 0);
        assertEquals("n1", watch.suspect("n1", 100, -1, false, 5 * SECOND));
        assertFalse(watch.starved("n1", -1, -1, -1, 5 * SECOND), "nothing committed yet: nothing to send");
        assertTrue(watch.starved("n1", 74, -1, -1, 5 * SECOND), "the leader committed 74 and sends none of it");
    }

    @Test
    void afterATornTailWasCutALeaderThatRemembersNoMoreCommittedIsAskedAllTheSame() {
        // The cut lost entries this node had acknowledged but not yet seen committed: the leader's
        // match index is past the log's end, the commit index it remembers for this node is not.
        watch.logCutAt(120);
        watch.suspect("n1", 100, 120, false, 0);
        assertEquals("n1", watch.suspect("n1", 100, 120, false, 5 * SECOND));
        assertFalse(watch.starved("n1", 120, 119, 120, 5 * SECOND), "the leader committed nothing past the log's end");
        assertTrue(watch.starved("n1", 900, 119, 120, 5 * SECOND));
        watch.suspect("n1", 100, 125, false, 40 * SECOND); // the log grew past the cut: back to the usual rule
        assertFalse(watch.starved("n1", 900, 119, 125, 80 * SECOND));
    }

    @Test
    void itStopsAskingAfterMaxAsksAtOneLogEndAndStartsAgainOnceTheLogMoved() {
        long t = 0;
        watch.suspect("n1", 100, 13, false, t);
        for (int i = 0; i < LostLogWatch.MAX_ASKS; i++) {
            t += LostLogWatch.RETRY_FACTOR * 5 * SECOND;
            assertTrue(watch.starved("n1", 40, 30, 13, t));
        }
        t += LostLogWatch.RETRY_FACTOR * 5 * SECOND;
        assertFalse(watch.starved("n1", 40, 30, 13, t), "gave up at this log end");
        watch.suspect("n1", 100, 14, false, t); // the log moved
        t += LostLogWatch.RETRY_FACTOR * 5 * SECOND;
        assertTrue(watch.starved("n1", 40, 30, 14, t), "a new log end: asking again is allowed");
        assertEquals(LostLogWatch.MAX_ASKS + 1, watch.asks());
    }
}
