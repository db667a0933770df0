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
}
