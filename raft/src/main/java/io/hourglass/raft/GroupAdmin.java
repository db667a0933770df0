package io.hourglass.raft;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.ReplicationLevel;

/**
 * The administration of one Raft group, from one of its replicas ({@link RaftNode#admin()}): its
 * voters, leadership transfers, snapshots and commit watches. The steps themselves are in
 * {@link Membership}; adding and removing a voter reach every shard's group through the host
 * ({@link RaftHost#addVoter}, {@link RaftHost#removeVoter}).
 */
public final class GroupAdmin {
    private final RaftHost host;
    private final Membership membership;
    private final RaftClient client;
    private final Supplier<RaftNode.Status> status;

    GroupAdmin(RaftHost host, Membership membership, RaftClient client, Supplier<RaftNode.Status> status) {
        this.host = host;
        this.membership = membership;
        this.client = client;
        this.status = status;
    }

    /**
     * Asks the group to make {@code peerId} the leader (Ratis' own transfer) once it has caught up,
     * writes going on until then (each wait at most {@code timeout}); returns when it leads, or fails.
     */
    public void transferLeadership(String peerId, Duration timeout) throws IOException {
        membership.transferLeadership(peerId, timeout, status);
    }

    /**
     * Work this leader finishes before any planned transfer of its leadership (an admin transfer, a
     * closing node's hand-over, the balancer, a removal), waited for at most a second: the delivery
     * engine replicates the acknowledgements of its next delete batch, which the next leader would
     * otherwise deliver again.
     */
    public void beforeTransfer(Supplier<CompletableFuture<?>> work) {
        membership.beforeTransfer(work);
    }

    /**
     * Hands this leader's leadership to {@code peerId} with the retrying transfer of hand-overs
     * (a transferee still catching up is waited for): for a move the node itself needs done.
     */
    public void handLeadershipTo(String peerId, Duration timeout) throws IOException {
        membership.transferWithRetries(peerId, timeout);
    }

    /** Asks this replica's state machine to take a snapshot now; returns its index. */
    public long snapshotNow(Duration timeout) throws IOException {
        return membership.snapshotNow(timeout);
    }

    /** The voters of the current configuration. */
    public List<RaftNode.Member> members() throws IOException {
        return membership.members();
    }

    /**
     * Adds a voter to every shard's group (see {@link RaftHost#addVoter}).
     *
     * @throws AlreadyExistsException when the id is already a member
     */
    public List<RaftNode.Member> addVoter(String id, String address, int raftPort) throws IOException {
        return host.addVoter(id, address, raftPort);
    }

    /** Removes a voter from every shard's group (see {@link RaftHost#removeVoter}); NotFoundException if it is none. */
    public List<RaftNode.Member> removeVoter(String id) throws IOException {
        return host.removeVoter(id);
    }

    /**
     * Waits until every voter knows log entry {@code index} committed (Ratis' ALL_COMMITTED watch; a
     * voter applies what it knows committed at once), at most {@code timeout}: false when a voter
     * did not confirm in time (one that is down never does).
     */
    public boolean awaitAllCommitted(long index, Duration timeout) {
        try {
            client.async().watch(index, ReplicationLevel.ALL_COMMITTED).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
