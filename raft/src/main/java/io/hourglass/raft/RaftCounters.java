package io.hourglass.raft;

import io.hourglass.raft.tls.PeerPortGuard;
import java.util.Set;

/**
 * What a node's Raft side counts, for {@code /metrics} and tests: a read-only view over the
 * parts that count (each thread-safe on its own).
 */
public final class RaftCounters {
    private final LeadershipNotifier leadership;
    private final LogWatches watches;
    private final Forwarder forwarder;
    private final ClockWatch clockWatch;
    private final LeaderExitWatch leaderExit;
    private final PeerPortGuard peerGuard;
    private final CheckpointServer checkpointServer;
    private final DiskGuard disk;
    private final java.util.concurrent.atomic.AtomicLong installNudges;

    RaftCounters(LeadershipNotifier leadership, LogWatches watches, Forwarder forwarder, ClockWatch clockWatch,
                 LeaderExitWatch leaderExit, PeerPortGuard peerGuard, CheckpointServer checkpointServer, DiskGuard disk,
                 java.util.concurrent.atomic.AtomicLong installNudges) {
        this.leadership = leadership;
        this.watches = watches;
        this.forwarder = forwarder;
        this.clockWatch = clockWatch;
        this.leaderExit = leaderExit;
        this.peerGuard = peerGuard;
        this.checkpointServer = checkpointServer;
        this.disk = disk;
        this.installNudges = installNudges;
    }

    /** Free bytes on the fullest file system of this node's data, read now (-1 if it cannot be read). */
    public long freeDiskBytes() {
        return disk.freeSpace().free();
    }

    /** {@code node.minFreeDiskMb} in bytes. */
    public long minFreeDiskBytes() {
        return disk.freeSpace().minFreeBytes();
    }

    /** Repairs the log check made at this start (a torn tail cut, an open segment closed; see {@code RaftLogCheck}). */
    public int logRepairs() {
        return disk.logRepairs();
    }

    /** Leadership changes this node has published (elections it won or lost, leaders it learned of). */
    public long leaderChanges() {
        return leadership.current().epoch();
    }

    /** Elections this node started at once because its leader's process was gone ({@link LeaderExitWatch}). */
    public long leaderExitElections() {
        return leaderExit.elections();
    }

    /**
     * Elections this node started at once because a majority of the voters had not heard from its
     * leader for {@code raft.electionTimeoutMin} ({@link LeaderExitWatch}).
     */
    public long leaderSilenceElections() {
        return leaderExit.silenceElections();
    }

    /** Step-downs this node asked of a leader that kept sending past its log's end ({@link LostLogWatch}). */
    public long lostLogStepDownRequests() {
        return watches.lostLogStepDownRequests();
    }

    /**
     * Step-downs this node asked of a leader that sent no notice to install the checkpoint this node had
     * downloaded ({@link PendingInstallWatch}).
     */
    public long pendingInstallStepDownRequests() {
        return watches.pendingInstallStepDownRequests();
    }

    /** Failed follower log appends after which Ratis would have failed every later append, mended ({@link AppendChain}). */
    public long appendChainMends() {
        return watches.appendChainMends();
    }

    /** Followers that have stopped catching up ({@link FollowerWatch}); empty unless this node leads. */
    public Set<String> stalledFollowers() {
        return watches.stalledFollowers();
    }

    /** Proposals this node forwarded to its leader (it did not lead when they were made). */
    public long forwards() {
        return forwarder.forwarded();
    }

    /** Forwarded proposal attempts given up because this node's division named another leader ({@link Forwarder}). */
    public long forwardsRetargeted() {
        return forwarder.retargeted();
    }

    /** Forwarded proposal attempts given up because no answer came within raft.electionTimeoutMin. */
    public long forwardsUnanswered() {
        return forwarder.unanswered();
    }

    /** This node's clock minus the other voters' (median of the last readings, ms; {@link ClockWatch}). */
    public long clockOffsetMs() {
        return clockWatch.offsetMs();
    }

    /** Calls the Raft port refused because the caller presented no peer certificate ({@link PeerPortGuard}). */
    public long refusedPeerCalls() {
        return peerGuard.refused();
    }

    /** Checkpoint chunks this node has sent to followers. */
    public long checkpointChunksSent() {
        return checkpointServer.chunksSent();
    }

    /**
     * Install notifications this node, leading, sent again to a follower stuck with a fetched
     * checkpoint Ratis would not install ({@link InstallNudgingAppender}).
     */
    public long installNudges() {
        return installNudges.get();
    }
}
