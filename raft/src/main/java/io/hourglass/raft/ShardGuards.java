package io.hourglass.raft;

import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.disk.CorruptRaftLogException;
import java.io.IOException;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.ratis.protocol.RaftGroupId;

/**
 * One replica's guards and watches over what Ratis alone does not notice, and what they count:
 * its Raft log on disk and the free space under it ({@link DiskGuard}), followers that stall and a
 * log its leader no longer feeds ({@link LogWatches}), a leader's process that is gone
 * ({@link LeaderExitWatch}), this node cut off from the others ({@link ContactGuard}); all of it
 * read by {@link RaftCounters}. The host checks the log before its server starts, starts the
 * watches once it runs and closes them before it stops.
 */
final class ShardGuards {
    final DiskGuard disk;
    final LogWatches watches;
    final LeaderExitWatch leaderExit;
    final ContactGuard contact;
    final RaftCounters counters;

    /** {@code contact} is made before (the proposer consults it); the guards start and close it. */
    ShardGuards(RaftHost host, int shard, EventStore store, GroupView view, ContactGuard contact,
                HourglassStateMachine stateMachine, Membership membership, Supplier<RaftNode.Status> status,
                LeadershipNotifier leadership, Forwarder forwarder, CheckpointServer checkpoints) {
        RaftConfig config = host.config();
        RaftGroupId groupId = RaftHost.groupId(shard);
        PeerTransport transport = host.transport;
        this.disk = new DiskGuard(config, store, RatisSettings.writeBufferBytes(host.maxEntryBytes()), groupId);
        this.leaderExit = new LeaderExitWatch(config.nodeId(), host::server, groupId, shard, host::raftAddressOf,
                transport.peers, config.leaderExitStagger(), config.electionTimeoutMin());
        this.watches = new LogWatches(config, status, view, stateMachine::installing, stateMachine::downloadedFrom,
                membership);
        this.contact = contact;
        this.counters = new RaftCounters(leadership, watches, forwarder, host.clockWatch, leaderExit, transport.guard,
                checkpoints, disk, transport.installNudges);
    }

    /** The log check before the server starts (see {@link DiskGuard#checkLog()}). */
    void checkLog() throws IOException {
        disk.checkLog().ifPresent(watches::logCutAt);
    }

    Optional<CorruptRaftLogException> corruptLogIn(Throwable failure) {
        return disk.corruptLogIn(failure);
    }

    void watchFreeSpace(FailStop failStop, BooleanSupplier closing) {
        disk.watch(failStop, closing);
    }

    String explainFailure(Throwable failure) {
        return disk.freeSpace().explain(failure);
    }

    /** Once the server runs. */
    void start() {
        watches.start();
        contact.start();
        leaderExit.start();
    }

    /** Before the server stops. */
    void close() {
        watches.close();
        disk.close();
        leaderExit.close();
        contact.close();
    }
}
