package io.hourglass.raft;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A follower's check that its leader still sends what this node's log lacks.
 *
 * <p>Raft assumes a node keeps its log: a leader never sends below the index a follower once
 * matched. A node whose data directory was lost and that restarted under its old id (a wiped
 * directory, a replaced disk) has a shorter log than its leader remembers, answers every append
 * with INCONSISTENCY, and the leader (Ratis 3.3) keeps sending from the remembered match index
 * for as long as it leads: the node never catches up, and the cluster is one failure from losing
 * its quorum.
 *
 * <p>This node sees it from its side. While a leader it hears from (within {@link #CONTACT_FACTOR}
 * timeouts) appended nothing to this
 * node's log for {@code timeout} and no checkpoint is being installed, it is <em>suspect</em>:
 * RaftNode then asks that leader for its commit indexes (at most once per timeout; an idle healthy
 * follower looks the same until that answer). If the leader has committed past the end of this
 * node's log <em>and</em> remembers this node's commit index beyond that end — the node once had
 * entries it no longer has — the node asks the leader to step down (at most once per
 * {@link #RETRY_FACTOR} timeouts, {@link #MAX_ASKS} times while its log stays where it is). The next
 * leader starts its term knowing no match index, finds this log's real end and sends the entries, or
 * a checkpoint when they are purged. A log stuck for another reason (the leader remembers no more
 * than this node has) is left to FollowerWatch's report: a new leader would not help it. (The
 * follower must ask: an append it refuses does not carry the leader's commit index into Ratis'
 * commit infos.)
 *
 * <p>A log whose torn tail the start cut off ({@link #logCutAt}) may have lost entries this node had
 * acknowledged, though never committed in its own eyes: the leader then holds a match index past the
 * log's end while remembering a commit index within it. Until the log grows past the cut, a leader
 * that has committed past it and appends nothing is asked to step down all the same.
 *
 * <p>Owned by RaftNode's watch thread, but for {@link #asks()} and {@link #logCutAt}.
 */
final class LostLogWatch {
    private static final Logger LOG = LoggerFactory.getLogger(LostLogWatch.class);
    /** Asks again no sooner than this many timeouts after the last ask. */
    static final int RETRY_FACTOR = 6;
    /** Step-downs asked for one log end before this node stops asking. */
    static final int MAX_ASKS = 3;
    /**
     * A leader heard from within this many timeouts still counts as sending. Not one timeout: a
     * Ratis leader whose appends a follower refuses backs off and then sends it only a heartbeat
     * every 5–7 s (seen in a chaos run), so a contact age measured at a random moment crosses one
     * timeout again and again, and the clock restarted each time never reached the timeout.
     */
    static final int CONTACT_FACTOR = 4;

    /** Looks that may be missed in a row before the watch counts the gap as a stall of its own. */
    static final int GAP_LOOKS = 4;

    private final String nodeId;
    private final long timeoutNanos;
    /** A longer gap between two looks means this process (or its watch thread) stalled. */
    private final long maxGapNanos;
    /** The time of the last look; MIN_VALUE before the first. */
    private long lookedNanos = Long.MIN_VALUE;
    private long logEnd = Long.MIN_VALUE;
    private long sinceNanos;
    private long checkedNanos;
    private boolean checked;
    private long askedNanos;
    private boolean asked;
    private int asksAtThisEnd;
    /** The log end after the start cut a torn tail off it (see {@link #logCutAt}); MIN_VALUE: nothing cut. */
    private volatile long cutEnd = Long.MIN_VALUE;
    private volatile long asks;

    /** A watch that never counts a gap between looks as a stall (looks given at any pace). */
    LostLogWatch(String nodeId, Duration timeout) {
        this(nodeId, timeout, Duration.ofNanos(Long.MAX_VALUE));
    }

    /**
     * @param maxGap the longest gap between two looks that is not a stall: after a longer one (the
     *     process was paused, or starved of CPU) the clock starts over, since this node could not have
     *     received what the leader sent meanwhile; a follower resumed after a SIGSTOP once asked a
     *     healthy leader to step down on its first look back.
     */
    LostLogWatch(String nodeId, Duration timeout, Duration maxGap) {
        this.nodeId = nodeId;
        this.timeoutNanos = timeout.toNanos();
        this.maxGapNanos = maxGap.toNanos();
    }

    /**
     * One look, taken while this node follows.
     *
     * @param leaderId the leader this node knows, or null (then nothing changes: see the method)
     * @param leaderContactMs how long ago the leader last reached this node
     * @param logEnd the index of this node's last log entry (-1: empty)
     * @param installing a checkpoint download or install is under way
     * @return the leader whose commit index to look up now (then call {@link #starved}), or null
     */
    String suspect(String leaderId, long leaderContactMs, long logEnd, boolean installing, long nowNanos) {
        // After a stall of this process what the leader sent meanwhile could not arrive: start over.
        boolean stalled = lookedNanos != Long.MIN_VALUE && nowNanos - lookedNanos > maxGapNanos;
        lookedNanos = nowNanos;
        if (leaderId == null && !stalled) {
            // A follower refusing every append hears a heartbeat only every 5-7 s and, timing out in
            // between, forgets its leader for a while: that is no news of the log, the clock runs on.
            return null;
        }
        boolean still = !stalled && leaderId != null && leaderContactMs * 1_000_000L < CONTACT_FACTOR * timeoutNanos
                && !installing && logEnd == this.logEnd;
        if (!still) {
            if (logEnd != this.logEnd) {
                asksAtThisEnd = 0;
            }
            this.logEnd = logEnd;
            sinceNanos = nowNanos;
            return null;
        }
        if (nowNanos - sinceNanos < timeoutNanos || (checked && nowNanos - checkedNanos < timeoutNanos)) {
            return null;
        }
        checked = true;
        checkedNanos = nowNanos;
        return leaderId;
    }

    /**
     * The answer to a look-up {@link #suspect} asked for.
     *
     * @param leaderCommit the commit index leader {@code leaderId} reported for itself
     * @param mineAtLeader the commit index the leader reported for this node (-1: none)
     * @return true when this node should ask that leader to step down now
     */
    boolean starved(String leaderId, long leaderCommit, long mineAtLeader, long logEnd, long nowNanos) {
        // An empty log under a leader that has committed entries yet sends none: the leader counts on
        // entries this node matched before its log was lost, even when it never heard this node's
        // commit index (a node wiped right after its group was made: seen with six shard groups).
        boolean lostEntries = mineAtLeader > logEnd || logEnd <= cutEnd || logEnd < 0;
        if (leaderCommit <= logEnd || !lostEntries || logEnd != this.logEnd || asksAtThisEnd >= MAX_ASKS
                || (asked && nowNanos - askedNanos < RETRY_FACTOR * timeoutNanos)) {
            return false;
        }
        asked = true;
        askedNanos = nowNanos;
        asks++;
        asksAtThisEnd++;
        String why = mineAtLeader > logEnd || logEnd < 0 ? "it counts on a log this node no longer has (its data directory was lost "
                + "or wiped?)" : "it may count on entries this node acknowledged before its start cut a torn tail off its log";
        LOG.warn("{}: leader {} has committed up to {} and remembers this node at {}, but appended nothing past this "
                        + "node's log end {} for {} s: {}; asking {} to step down so that the next leader starts from this "
                        + "log's real end ({} of {})", nodeId, leaderId, leaderCommit, mineAtLeader, logEnd,
                Duration.ofNanos(nowNanos - sinceNanos).toSeconds(), why, leaderId, asksAtThisEnd, MAX_ASKS);
        return true;
    }

    /**
     * The start cut a torn tail off this node's log, which now ends at {@code end} (or the store's
     * applied index, if that is later): entries this node acknowledged may be gone. Call before the watch runs.
     */
    void logCutAt(long end) {
        cutEnd = end;
    }

    /** This node leads: start over. */
    void reset() {
        logEnd = Long.MIN_VALUE;
    }

    /** Step-downs this node has asked for. */
    long asks() {
        return asks;
    }
}
