package io.hourglass.raft;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's view of whether each follower is still catching up. A follower is <em>stalled</em>
 * when it is behind the leader's commit index and its match index has not moved for
 * {@code stallTimeout}: its log appender died, it is paused, cut off, or refuses every append.
 * Such a cluster keeps committing on the others without it, one failure away from losing its
 * quorum, so the stall is logged (WARN once, INFO when it ends), exported as a metric and shown by
 * {@code cluster status}.
 *
 * <p>Owned by one thread: {@link #observe} is called by RaftNode's watch thread only; the
 * read-only {@link #stalled()} snapshot may be taken from any thread.
 */
final class FollowerWatch {
    private static final Logger LOG = LoggerFactory.getLogger(FollowerWatch.class);

    private final String nodeId;
    private final long stallTimeoutNanos;
    private final Map<String, Progress> progress = new TreeMap<>();
    private volatile Set<String> stalled = Set.of();

    private static final class Progress {
        long matchIndex;
        long sinceNanos;
        boolean stalled;

        Progress(long matchIndex, long sinceNanos) {
            this.matchIndex = matchIndex;
            this.sinceNanos = sinceNanos;
        }
    }

    FollowerWatch(String nodeId, Duration stallTimeout) {
        this.nodeId = nodeId;
        this.stallTimeoutNanos = stallTimeout.toNanos();
    }

    /**
     * One look at the followers, taken while this node leads.
     *
     * @param matchIndex each follower's match index, as the leader knows it
     * @param commitIndex the leader's commit index
     * @param nowNanos a monotonic time
     */
    void observe(Map<String, Long> matchIndex, long commitIndex, long nowNanos) {
        progress.keySet().retainAll(matchIndex.keySet());
        Set<String> now = new TreeSet<>();
        for (Map.Entry<String, Long> e : matchIndex.entrySet()) {
            String id = e.getKey();
            long match = e.getValue();
            Progress p = progress.computeIfAbsent(id, k -> new Progress(match, nowNanos));
            if (match != p.matchIndex || match >= commitIndex) {
                if (p.stalled) {
                    LOG.info("{}: follower {} is catching up again (match index {}, commit {})",
                            nodeId, id, match, commitIndex);
                }
                p.matchIndex = match;
                p.sinceNanos = nowNanos;
                p.stalled = false;
                continue;
            }
            if (nowNanos - p.sinceNanos >= stallTimeoutNanos) {
                if (!p.stalled) {
                    LOG.warn("{}: follower {} is not catching up: its match index {} has not moved for {} s while "
                                    + "the commit index is {}; the cluster runs without it (check that node: down, "
                                    + "paused, cut off, or failing to install a checkpoint)",
                            nodeId, id, match, Duration.ofNanos(nowNanos - p.sinceNanos).toSeconds(), commitIndex);
                }
                p.stalled = true;
                now.add(id);
            }
        }
        stalled = Set.copyOf(now);
    }

    /** This node stopped leading: it knows nothing of the followers any more. */
    void reset() {
        progress.clear();
        stalled = Set.of();
    }

    /** Followers that are not catching up, as of the last look (empty unless this node leads). */
    Set<String> stalled() {
        return stalled;
    }
}
