package io.hourglass.raft;

import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watches over the log's progress, on one daemon thread: a leader looks at its followers'
 * progress ({@link FollowerWatch}), a follower at whether its leader still sends what its log lacks
 * ({@link LostLogWatch}) and whether a checkpoint it downloaded gets installed ({@link PendingInstallWatch}),
 * and asks that leader to step down when not; a leader whose log holds entries it has not been able
 * to commit for {@code raft.lostLogTimeout} while Ratis keeps it leading steps down itself; and
 * every node mends Ratis' follower append chain after a failed append ({@link AppendChain}).
 */
final class LogWatches implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LogWatches.class);

    private final RaftConfig config;
    private final Supplier<RaftNode.Status> status;
    private final GroupView view;
    private final BooleanSupplier installing;
    private final Supplier<String> downloadedFrom;
    private final Membership membership;
    private final FollowerWatch followerWatch;
    private final LostLogWatch lostLogWatch;
    private final PendingInstallWatch pendingInstallWatch;
    private final AppendChain appendChain;
    private final ScheduledExecutorService executor;
    private final StuckCommitWatch stuckCommit;

    /**
     * @param installing whether a checkpoint download or install is under way on this node
     * @param downloadedFrom the leader whose notice made this node download the checkpoint that now
     *        waits to be installed, or null
     */
    LogWatches(RaftConfig config, Supplier<RaftNode.Status> status, GroupView view, BooleanSupplier installing,
               Supplier<String> downloadedFrom, Membership membership) {
        this.config = config;
        this.status = status;
        this.view = view;
        this.installing = installing;
        this.downloadedFrom = downloadedFrom;
        this.membership = membership;
        this.followerWatch = new FollowerWatch(config.nodeId(), config.followerStallTimeout());
        this.lostLogWatch = new LostLogWatch(config.nodeId(), config.lostLogTimeout(),
                Duration.ofMillis(LostLogWatch.GAP_LOOKS * lookEveryMs(config)));
        this.pendingInstallWatch = new PendingInstallWatch(config.nodeId(), config.lostLogTimeout());
        this.appendChain = new AppendChain(config.nodeId(), view::division);
        this.stuckCommit = new StuckCommitWatch(config.lostLogTimeout());
        this.executor = Daemons.scheduler("hourglass-follower-watch-" + config.nodeId());
    }

    /** Looks four times per the shorter of the two timeouts, between every 100 ms and every second. */
    void start() {
        long every = lookEveryMs(config);
        executor.scheduleWithFixedDelay(this::look, every, every, TimeUnit.MILLISECONDS);
    }

    private static long lookEveryMs(RaftConfig config) {
        return Math.max(100, Math.min(1_000,
                Math.min(config.followerStallTimeout().toMillis(), config.lostLogTimeout().toMillis()) / 4));
    }

    /** Followers that have stopped catching up; empty unless this node leads. */
    Set<String> stalledFollowers() {
        return followerWatch.stalled();
    }

    /** The start cut the log's torn tail at {@code index}: see {@link LostLogWatch#logCutAt}. */
    void logCutAt(long index) {
        lostLogWatch.logCutAt(index);
    }

    /** Step-downs this node asked of a leader that kept sending past its log's end. */
    long lostLogStepDownRequests() {
        return lostLogWatch.asks();
    }

    /** Step-downs this node asked of a leader that sent no notice to install a checkpoint it had downloaded. */
    long pendingInstallStepDownRequests() {
        return pendingInstallWatch.asks();
    }

    /** Failed follower append chains replaced ({@link AppendChain}). */
    long appendChainMends() {
        return appendChain.mends();
    }

    AppendChain appendChain() {
        return appendChain;
    }

    private void look() {
        try {
            appendChain.mend();
            RaftNode.Status s = status.get();
            if ("LEADER".equals(s.role())) {
                lostLogWatch.reset();
                followerWatch.observe(s.followerMatchIndex(), s.commitIndex(), System.nanoTime());
                stepDownIfStuck(s.commitIndex(), System.nanoTime());
                return;
            }
            stuckCommit.reset();
            followerWatch.reset();
            GroupView.FollowerProgress p = view.followerProgress();
            String overdue = pendingInstallWatch.overdue(downloadedFrom.get(), p == null ? null : p.leaderId(),
                    System.nanoTime());
            if (overdue != null) {
                membership.askToStepDown(overdue, config.electionTimeoutMax().multipliedBy(2));
            }
            if (p == null) {
                // No leader known right now. Not news of the log: a follower whose appends fail gets a
                // heartbeat from the leader only every 5-7 s, so the follower times out and forgets its
                // leader between them; restarting the watch's clock then would never let it reach the timeout.
                return;
            }
            String suspect = lostLogWatch.suspect(p.leaderId(), p.leaderContactMs(), p.logEnd(),
                    installing.getAsBoolean(), System.nanoTime());
            if (suspect != null) {
                long[] commits = membership.commitIndexesAt(suspect);
                if (lostLogWatch.starved(suspect, commits[0], commits[1], p.logEnd(), System.nanoTime())) {
                    membership.askToStepDown(suspect, config.electionTimeoutMax().multipliedBy(2));
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: follower watch failed", config.nodeId(), e);
        }
    }

    /** A leader that has committed nothing of what its log holds for a while steps down ({@link StuckCommitWatch}). */
    private void stepDownIfStuck(long commitIndex, long nowNanos) throws IOException {
        org.apache.ratis.server.protocol.TermIndex last = view.division().getRaftLog().getLastEntryTermIndex();
        long lastIndex = last == null ? -1 : last.getIndex();
        if (stuckCommit.overdue(commitIndex, lastIndex, nowNanos)) {
            LOG.warn("{}: leading, but nothing committed for {} (commit index {}, log end {}): stepping down so that "
                    + "a new election restarts replication", config.nodeId(), config.lostLogTimeout(), commitIndex, lastIndex);
            membership.askToStepDown(config.nodeId(), config.electionTimeoutMax().multipliedBy(2));
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
