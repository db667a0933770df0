package io.hourglass.raft;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A follower's check that a checkpoint it downloaded gets installed.
 *
 * <p>Ratis (3.3) installs a checkpoint the state machine fetched only when a leader's next install
 * notification arrives: the pause, the store swap and the move of the log past the checkpoint all
 * run in that notification's handler. A leader normally sends it within milliseconds. One whose log
 * appender for this node never sends it leaves the node installing, and behind, for as long as it
 * leads; {@link LostLogWatch} leaves an installing node alone. Seen in a CI chaos run: a wiped
 * node downloaded the checkpoint in 1.4 s, then heard no notification for 70 s (its leader moved the
 * node's next index back up to the match index it remembered from before the wipe, past its log
 * start; {@link InstallNudgingAppender} now keeps the node's answer). Other ways to miss it remain: Ratis' appender
 * waits for a notification's reply without a deadline (the request's timeout is dropped once its
 * stream is half-closed), so one lost reply stops it sending to that follower.
 *
 * <p>Every leader's first notification to this node completes the install. So, while a downloaded
 * checkpoint has waited for {@code timeout}, this node asks the leader it knows (else the one that
 * notified it) to step down, at most once per {@link LostLogWatch#RETRY_FACTOR} timeouts. Owned by
 * RaftNode's watch thread, but for {@link #asks()}.
 */
final class PendingInstallWatch {
    private static final Logger LOG = LoggerFactory.getLogger(PendingInstallWatch.class);

    private final String nodeId;
    private final long timeoutNanos;
    private boolean waiting;
    private long sinceNanos;
    private boolean asked;
    private long askedNanos;
    private volatile long asks;

    PendingInstallWatch(String nodeId, Duration timeout) {
        this.nodeId = nodeId;
        this.timeoutNanos = timeout.toNanos();
    }

    /**
     * One look.
     *
     * @param downloadedFrom the leader that notified this node of the checkpoint it downloaded and
     *        has not installed yet, or null when none waits
     * @param knownLeader the leader this node knows now, or null
     * @return the leader to ask to step down now, or null
     */
    String overdue(String downloadedFrom, String knownLeader, long nowNanos) {
        if (downloadedFrom == null) {
            waiting = false;
            asked = false;
            return null;
        }
        if (!waiting) {
            waiting = true;
            sinceNanos = nowNanos;
            return null;
        }
        if (nowNanos - sinceNanos < timeoutNanos
                || (asked && nowNanos - askedNanos < LostLogWatch.RETRY_FACTOR * timeoutNanos)) {
            return null;
        }
        asked = true;
        askedNanos = nowNanos;
        asks++;
        String leader = knownLeader != null ? knownLeader : downloadedFrom;
        LOG.warn("{}: the checkpoint downloaded from {} has waited {} s for the leader's next install notification, "
                        + "which installs it; asking {} to step down so that the next leader sends one", nodeId,
                downloadedFrom, Duration.ofNanos(nowNanos - sinceNanos).toSeconds(), leader);
        return leader;
    }

    /** Step-downs this node has asked for. */
    long asks() {
        return asks;
    }
}
