package io.hourglass.raft;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.grpc.server.GrpcLogAppender;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.protocol.TermIndex;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ratis' gRPC log appender, which also tells a follower again to install a checkpoint when that
 * follower is stuck between two rules of Ratis (3.3):
 *
 * <ul>
 *   <li>a follower fetching a checkpoint answers every append with "inconsistent, my next index is
 *       N", N the end of its own log, and it finishes a fetched install (pause, reload the store,
 *       move its log past the checkpoint) only when the leader's next install notification comes;
 *   <li>the leader notifies only a follower whose next index is before its log's start (or at the
 *       start, with the entry before it purged), and it takes the N it is told.
 * </ul>
 *
 * A deposed leader's uncommitted tail starts at the new leader's first entry of its term, which
 * opens a log segment; purges drop whole segments, so the new leader's log often starts exactly
 * there. Such a follower needs a checkpoint (its last common entry is purged), is notified once,
 * and then answers N at the end of its tail, past the leader's start: the leader appends from N
 * forever and the fetched checkpoint is never installed (chaos run, clock-skew fault; {@code
 * DivergedFollowerInstallTest}).
 *
 * <p>The way out: a follower that has matched no entry of this leader's log from before its start
 * on ({@code matchIndex < start - 1}, or the entry right before the start when this leader knows no
 * term for it), whose next index is at or past the start, and whose match
 * index has not moved for {@link #stallNanos}, is notified again. A healthy follower never stays in
 * that state: its appends match, or its next index falls below the start. Notifying one that is
 * not stuck costs little: Ratis answers "already installed" if its store is recent enough.
 *
 * <p>Such a repeated notification names this log's next index as the first available entry, not
 * its start ({@link #firstAvailable}). A follower takes a fetched install to completion only on a
 * notification whose first available index is at or past the one it started with, and that one may
 * have come from a former leader whose log started later than this one's (chaos run: the leader
 * died while a follower installed its checkpoint; the new leader's start was 11 000 entries earlier,
 * every notification failed on the follower with "inProgressInstallSnapshotRequest … is not
 * eligible", and with the third node down the group had no majority for 8 s, until that node came
 * back). This log's next index is past every former leader's start: a start is at most a snapshot
 * index + 1, a snapshot holds committed entries only, and every committed entry is in this log.
 */
final class InstallNudgingAppender extends GrpcLogAppender {
    private static final Logger LOG = LoggerFactory.getLogger(InstallNudgingAppender.class);
    /** The counter of nudges in Ratis' {@link Parameters}, shared by a node's appenders. */
    static final String NUDGES = "hourglass.raft.installNudges";

    /**
     * Tests only: each appender sends at most one install notification, then hangs, as one of
     * Ratis' would that waits forever for a lost reply ({@link PendingInstallWatch}).
     */
    static volatile boolean oneNotificationPerAppender;

    private final long stallNanos;
    private boolean notified;
    private final AtomicLong nudges;
    private long watchedMatch = Long.MIN_VALUE;
    private long matchSince;
    private boolean warned;
    /**
     * Appender thread: whether this appender has nudged its follower. From then on every notification
     * names this log's next index: one naming the start again would fail on a follower that began its
     * install on the nudge.
     */
    private boolean nudged;

    InstallNudgingAppender(RaftServer.Division server, LeaderState state, FollowerInfo follower, long stallNanos,
                           AtomicLong nudges) {
        super(server, state, follower);
        this.stallNanos = stallNanos;
        this.nudges = nudges;
    }

    /**
     * How long a follower may sit in the stuck state before it is notified again: twice the maximum
     * election timeout, at least 3 s; a walk back over a divergent tail takes a few round trips.
     */
    static long stallNanos(RaftServer.Division server) {
        long timeoutMax = RaftServerConfigKeys.Rpc.timeoutMax(server.getRaftServer().getProperties())
                .toLong(TimeUnit.NANOSECONDS);
        return Math.max(TimeUnit.SECONDS.toNanos(3), 2 * timeoutMax);
    }

    @Override
    public boolean shouldInstallSnapshot(boolean hasSnapshot) {
        boolean due = super.shouldInstallSnapshot(hasSnapshot);
        boolean nudge = !due && stuckInAnInstall(System.nanoTime());
        nudged |= nudge;
        boolean notify = due || nudge;
        if (notify && oneNotificationPerAppender) {
            if (notified) {
                waitUntilStopped();
                return false;
            }
            notified = true;
        }
        return notify;
    }

    /**
     * With nothing new to send, Ratis 3.3 sends nothing even to a follower that has not heard of the
     * latest commit, until the next heartbeat (half the minimum election timeout): its commit-index
     * metadata entries used to carry the news, and without them followers applied every commit up
     * to 500 ms late (a follower's admin view, a new leader's catch-up). Such a follower gets an
     * empty append carrying the commit index: no log write, no fsync.
     */
    @Override
    public org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto newAppendEntriesRequest(long callId,
            boolean heartbeat) throws org.apache.ratis.server.raftlog.RaftLogIOException {
        org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto request = super.newAppendEntriesRequest(callId, heartbeat);
        if (request == null && !heartbeat && getRaftLog().getLastCommittedIndex() > getFollower().getCommitIndex()
                && getFollower().getNextIndex() >= getRaftLog().getNextIndex()) {
            return super.newAppendEntriesRequest(callId, true);
        }
        return request;
    }

    @Override
    public TermIndex shouldNotifyToInstallSnapshot() {
        TermIndex ratisChoice = super.shouldNotifyToInstallSnapshot();
        if (ratisChoice == null) {
            return null; // the common case, on every turn of the appender's loop: no lookups
        }
        boolean pastItsStore = !nudged && previousUnknown(getFollower().getNextIndex(), ratisChoice.getIndex());
        return firstAvailable(ratisChoice, nudged || pastItsStore, getServer().getInfo().getCurrentTerm(),
                getRaftLog().getNextIndex());
    }

    /**
     * Whether Ratis notifies a follower whose next index is this log's start while this leader knows
     * no term for the entry before it (purged, and not its snapshot's): no append can reach that
     * follower. Named as the first available entry, the start makes a follower whose store is at the
     * entry before it answer "already installed", and the two repeated that thousands of times a
     * second while the follower never caught up (a deposed leader whose uncommitted tail began at the
     * new leader's start, {@code DivergedFollowerInstallTest}). It is told this log's next index
     * instead, and fetches a checkpoint.
     */
    private boolean previousUnknown(long followerNext, long notifiedIndex) {
        if (followerNext != notifiedIndex) {
            return false;
        }
        long previous = followerNext - 1;
        if (getRaftLog().getTermIndex(previous) != null) {
            return false;
        }
        org.apache.ratis.statemachine.SnapshotInfo snapshot = getServer().getStateMachine().getLatestSnapshot();
        return snapshot == null || snapshot.getIndex() != previous;
    }

    /**
     * The first available entry a notification names: Ratis' choice (this log's start), or this
     * log's next index once this appender has nudged its follower (see the class comment); null
     * when there is no notification to send.
     */
    static TermIndex firstAvailable(TermIndex ratisChoice, boolean nudged, long term, long nextIndex) {
        if (ratisChoice == null || !nudged || nextIndex <= ratisChoice.getIndex()) {
            return ratisChoice;
        }
        return TermIndex.valueOf(term, nextIndex);
    }

    /** Tests only: hangs as an appender waiting for a lost reply does, until its leader steps down. */
    private void waitUntilStopped() {
        while (isRunning()) {
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    /**
     * A follower that answers a next index before this log's start needs a checkpoint whatever it
     * matched before: its log was wiped, or it is installing one and answers its own log's end. Ratis
     * moves the next index back up to the old match index + 1 instead, and the two answers then
     * alternate (CI chaos run: after one notification the leader sent none for 70 s while the
     * follower, its checkpoint downloaded, answered next index 0). Keeping the follower's answer keeps
     * its next index before the start, so Ratis notifies it: every notification also completes a
     * fetched install.
     */
    @Override
    protected long getNextIndexForInconsistency(long requestFirstIndex, long replyNextIndex) {
        return nextIndexForInconsistency(getRaftLog().getStartIndex(), replyNextIndex,
                super.getNextIndexForInconsistency(requestFirstIndex, replyNextIndex));
    }

    /** The next index to take from a follower's answer {@code replyNextIndex}, given Ratis' choice. */
    static long nextIndexForInconsistency(long logStart, long replyNextIndex, long ratisChoice) {
        if (logStart > RaftLog.LEAST_VALID_LOG_INDEX && replyNextIndex >= 0 && replyNextIndex < logStart) {
            return replyNextIndex;
        }
        return ratisChoice;
    }

    /** Called on the appender's own thread only. */
    private boolean stuckInAnInstall(long now) {
        FollowerInfo follower = getFollower();
        long match = follower.getMatchIndex();
        if (match != watchedMatch) {
            watchedMatch = match;
            matchSince = now;
            warned = false;
            return false;
        }
        long start = getRaftLog().getStartIndex();
        long next = follower.getNextIndex();
        // A match right before the start counts when no append can follow it (previousUnknown).
        if (start <= RaftLog.LEAST_VALID_LOG_INDEX || match >= start || match == start - 1 && !previousUnknown(start, start)
                || next < start
                || next >= getRaftLog().getNextIndex() || now - matchSince < stallNanos) {
            return false;
        }
        nudges.incrementAndGet();
        if (!warned) {
            warned = true;
            LOG.warn("{}: follower {} has matched no entry of this log for {} ms and answers next index {}, past this "
                            + "log's start {}: telling it again to install a checkpoint (a fetched install completes only "
                            + "on a notification)", getServer().getId(), follower.getId(),
                    TimeUnit.NANOSECONDS.toMillis(now - matchSince), next, start);
        }
        return true;
    }

    /**
     * The RPC type that makes Ratis use this appender: gRPC in every other respect. Ratis finds it by
     * class name ({@code raft.rpc.type}), hence public with a public constructor.
     */
    public static final class Rpc implements RpcType {
        public Rpc() {
        }

        @Override
        public String name() {
            return Rpc.class.getName();
        }

        @Override
        public RpcFactory newFactory(Parameters parameters) {
            return new Factory(parameters);
        }
    }

    static final class Factory extends GrpcFactory {
        private final AtomicLong nudges;

        Factory(Parameters parameters) {
            super(parameters);
            AtomicLong shared = parameters.get(NUDGES, AtomicLong.class);
            this.nudges = shared != null ? shared : new AtomicLong();
        }

        @Override
        public LogAppender newLogAppender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
            return new InstallNudgingAppender(server, state, follower, stallNanos(server), nudges);
        }
    }
}
