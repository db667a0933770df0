package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** When a leader that commits nothing of what its log holds steps down. */
class StuckCommitWatchTest {
    private static final long S = 1_000_000_000L;

    @Test
    void entriesPastTheCommitIndexForTheTimeoutMakeItOverdueOncePerTimeout() {
        StuckCommitWatch w = new StuckCommitWatch(Duration.ofSeconds(5));
        assertFalse(w.overdue(10, 11, 0));
        assertFalse(w.overdue(10, 11, 4 * S), "within the timeout");
        assertTrue(w.overdue(10, 11, 5 * S), "nothing committed for 5 s with an entry waiting");
        assertFalse(w.overdue(10, 11, 6 * S), "asked once per timeout");
        assertTrue(w.overdue(10, 11, 10 * S));
    }

    @Test
    void anIdleLeaderOrOneThatCommitsIsNeverOverdue() {
        StuckCommitWatch w = new StuckCommitWatch(Duration.ofSeconds(5));
        assertFalse(w.overdue(10, 10, 0));
        assertFalse(w.overdue(10, 10, 60 * S), "idle: nothing to commit");
        assertFalse(w.overdue(11, 12, 61 * S));
        assertFalse(w.overdue(12, 13, 65 * S), "the commit index moved");
        assertFalse(w.overdue(13, 14, 69 * S));
        w.reset();
        assertFalse(w.overdue(13, 14, 75 * S), "a new leadership starts afresh");
    }

    @Test
    void aNewGroupsFirstLeaderStartsItsClockAtItsFirstLook() {
        // Nothing committed yet (commit index -1) and its first entry waiting: the clock starts at the
        // first look, not at some earlier instant. It used to start at 0 of System.nanoTime(), so a new
        // node's leader stepped down within milliseconds of being elected.
        StuckCommitWatch w = new StuckCommitWatch(Duration.ofSeconds(5));
        assertFalse(w.overdue(-1, 0, 1_000 * S));
        assertFalse(w.overdue(-1, 0, 1_004 * S));
        assertTrue(w.overdue(-1, 0, 1_005 * S));
        w.reset();
        assertFalse(w.overdue(-1, 0, 2_000 * S), "after a reset too");
    }
}
