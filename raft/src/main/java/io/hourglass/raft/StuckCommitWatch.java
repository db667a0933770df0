package io.hourglass.raft;

import java.time.Duration;

/**
 * A leader's check that it still commits what its log holds: entries past the commit index and no
 * commit for {@code timeout} make it overdue (at most once per timeout). Ratis keeps such a leader
 * as long as the followers answer its heartbeats, yet its appender to one of them can stop sending
 * entries after that follower restarted (seen in CI: the metadata group's new leader, one voter down
 * and the other just restarted, never committed its term's first entry, and the group had no usable
 * leader for minutes). Stepping down starts every appender afresh in the next term. Owned by
 * {@link LogWatches}' thread.
 */
final class StuckCommitWatch {
    /** No look since the last reset: the next look starts the clock whatever the commit index. */
    private static final long UNSEEN = Long.MIN_VALUE;
    private final long timeoutNanos;
    private long commit = UNSEEN;
    private long sinceNanos;

    StuckCommitWatch(Duration timeout) {
        this.timeoutNanos = timeout.toNanos();
    }

    /** One look while leading: true when this leader should step down now. */
    boolean overdue(long commitIndex, long lastIndex, long nowNanos) {
        if (lastIndex <= commitIndex || commitIndex != commit) {
            commit = commitIndex;
            sinceNanos = nowNanos;
            return false;
        }
        if (nowNanos - sinceNanos < timeoutNanos) {
            return false;
        }
        sinceNanos = nowNanos; // once per timeout
        return true;
    }

    /** Not leading: the next leadership starts afresh. */
    void reset() {
        commit = UNSEEN;
    }
}
