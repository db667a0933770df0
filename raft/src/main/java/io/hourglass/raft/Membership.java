package io.hourglass.raft;

import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.HourglassException;
import io.hourglass.core.NotFoundException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who the voters are and how they change: the current configuration, removing a voter,
 * committing a new voter list, transferring leadership — all through Ratis' own admin API.
 * Thread-safe: it keeps no state; Ratis orders concurrent changes (one at a time).
 */
final class Membership {
    private static final Logger LOG = LoggerFactory.getLogger(Membership.class);

    private final String nodeId;
    private final RaftServer server;
    private final RaftClient client;
    /** Builds a client for one new node (adding it), with this node's Raft properties and TLS. */
    private final java.util.function.Supplier<RaftClient.Builder> clients;

    private final org.apache.ratis.protocol.RaftGroupId groupId;
    /** What this leader finishes before it gives its leadership away (see {@link GroupAdmin#beforeTransfer}). */
    private volatile java.util.function.Supplier<java.util.concurrent.CompletableFuture<?>> beforeTransfer =
            () -> java.util.concurrent.CompletableFuture.completedFuture(null);

    /** Holds this node's proposals back while a transfer starts (see Proposer#hold); returns the release. */
    private final java.util.function.LongFunction<Runnable> holdProposals;
    /** The most a transfer waits for the proposals already in this leader's log to be answered. */
    static final long HOLD_WAIT_MS = 200;

    /** The most a transfer waits for {@link #beforeTransfer}: it is a courtesy, the transfer goes ahead anyway. */
    static final Duration BEFORE_TRANSFER_WAIT = Duration.ofSeconds(1);

    Membership(String nodeId, RaftServer server, RaftClient client, java.util.function.Supplier<RaftClient.Builder> clients,
               org.apache.ratis.protocol.RaftGroupId groupId, java.util.function.LongFunction<Runnable> holdProposals) {
        this.nodeId = nodeId;
        this.holdProposals = holdProposals;
        this.groupId = groupId;
        this.server = server;
        this.client = client;
        this.clients = clients;
    }

    /**
     * Adds a voter: creates the group on the new node (started empty with --join), then commits
     * the new configuration; Ratis lets the new node catch up before it counts for the quorum.
     *
     * @throws AlreadyExistsException when the id is already a member
     */
    List<RaftNode.Member> addVoter(String id, String host, int raftPort) throws IOException {
        List<RaftPeer> peers = new ArrayList<>(currentPeers());
        if (peers.stream().anyMatch(p -> p.getId().toString().equals(id))) {
            throw new AlreadyExistsException(HourglassException.excerpt(id) + " is already a member of the cluster");
        }
        RaftPeer added = RaftPeer.newBuilder().setId(id).setAddress(host + ":" + raftPort).build();
        peers.add(added);
        try (RaftClient toNew = clients.get().setRaftGroup(RaftGroup.valueOf(groupId, added))
                .setClientId(ClientId.randomId())
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(5,
                        TimeDuration.valueOf(500, TimeUnit.MILLISECONDS))).build()) {
            RaftClientReply created = toNew.getGroupManagementApi(added.getId())
                    .add(RaftGroup.valueOf(groupId, peers));
            if (!created.isSuccess()) {
                throw new IOException("node " + id + " at " + added.getAddress() + " refused the group: " + created.getException());
            }
        } catch (org.apache.ratis.protocol.exceptions.AlreadyExistsException e) {
            LOG.info("{}: {} already has the group, or is adding it", nodeId, id);
        } catch (org.apache.ratis.protocol.exceptions.RaftRetryFailureException e) {
            // Not an internal fault: the new node is not (yet) listening. Clients may retry.
            throw new io.hourglass.core.UnavailableException("node " + id + " at " + added.getAddress()
                    + " did not answer; start it with --join first, then add it again", e);
        }
        awaitGroupRunning(added, peers);
        return setVoters(peers);
    }

    /** How long {@link #addVoter} waits for the new node to start the group it was asked to add. */
    static final Duration GROUP_START_WAIT = Duration.ofSeconds(45);

    /**
     * Returns once {@code added} runs the group (Ratis answers a group's info only once the division
     * has started), adding it again if the node dropped it. Needed because "already exists" does not
     * mean "added": when an add outlasts the client's request timeout the client asks again, the
     * second ask is told the group exists, and if the first then fails the node drops the group.
     * Committing the configuration then would make a voter that refuses every append of the group
     * (a group with a short log counts it as caught up at once), never to recover.
     */
    void awaitGroupRunning(RaftPeer added, List<RaftPeer> peers) throws IOException {
        long deadline = System.nanoTime() + GROUP_START_WAIT.toNanos();
        Exception last = null;
        try (RaftClient probe = clients.get().setRaftGroup(RaftGroup.valueOf(groupId, added))
                .setClientId(ClientId.randomId()).setRetryPolicy(RetryPolicies.noRetry()).build()) {
            var api = probe.getGroupManagementApi(added.getId());
            while (System.nanoTime() < deadline) {
                try {
                    if (!api.list().getGroupIds().contains(groupId)) {
                        LOG.warn("{}: {} dropped group {} after a failed add; adding it again", nodeId, added.getId(),
                                groupId);
                        api.add(RaftGroup.valueOf(groupId, peers));
                    }
                    if (api.info(groupId).isSuccess()) {
                        return;
                    }
                } catch (IOException | RuntimeException e) {
                    last = e; // not started yet (no role), an add in progress, or a slow answer
                }
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
            }
        }
        throw new io.hourglass.core.UnavailableException("node " + added.getId() + " did not start the group within "
                + GROUP_START_WAIT.toSeconds() + " s; add it again", last);
    }

    /** Asks this node's state machine to take a snapshot now; returns its index. */
    long snapshotNow(Duration timeout) throws IOException {
        RaftClientReply reply = client.getSnapshotManagementApi(server.getId()).create(timeout.toMillis());
        if (!reply.isSuccess()) {
            throw new IOException("snapshot failed: " + reply.getException());
        }
        return reply.getLogIndex();
    }

    /** The voters of the current configuration. */
    List<RaftPeer> currentPeers() throws IOException {
        return List.copyOf(server.getDivision(groupId).getRaftConf().getCurrentPeers());
    }

    List<RaftNode.Member> members() throws IOException {
        return toMembers(currentPeers());
    }

    /** A member's Raft {@code host:port} from the current configuration, or null if it is none. */
    String raftAddressOf(String peerId) {
        try {
            return currentPeers().stream().filter(p -> p.getId().toString().equals(peerId))
                    .map(RaftPeer::getAddress).findFirst().orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    /** Removes a voter that is not the leader (transfer leadership first); NotFoundException if it is none. */
    List<RaftNode.Member> removeVoter(String id) throws IOException {
        List<RaftPeer> peers = new ArrayList<>(currentPeers());
        if (!peers.removeIf(p -> p.getId().toString().equals(id))) {
            throw new NotFoundException(HourglassException.excerpt(id) + " is not a member of the cluster");
        }
        return setVoters(peers);
    }

    /** Commits {@code peers} as the voters (the {@code List} overload: see RATIS-NOTES.md). */
    List<RaftNode.Member> setVoters(List<RaftPeer> peers) throws IOException {
        RaftClientReply reply = client.admin().setConfiguration(peers);
        if (!reply.isSuccess()) {
            var e = reply.getException();
            if (Forwarder.leadershipRefusal(e)
                    || e instanceof org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException) {
                // A leadership on the move or another change under way: passing, the caller asks again.
                throw new io.hourglass.core.UnavailableException("configuration change refused for now, run it "
                        + "again: " + e.getMessage(), e);
            }
            throw new IOException("configuration change failed: " + e);
        }
        LOG.info("{}: voters are now {}", nodeId, peers);
        return toMembers(peers);
    }

    /** Sets {@link #beforeTransfer}. */
    void beforeTransfer(java.util.function.Supplier<java.util.concurrent.CompletableFuture<?>> work) {
        this.beforeTransfer = work;
    }

    /**
     * Runs {@link #beforeTransfer} and waits for it, at most {@link #BEFORE_TRANSFER_WAIT}: once the
     * transfer starts, this leader refuses every write until it has stepped down, so what it wants
     * replicated (the acknowledgements waiting for the next delete batch) goes first.
     */
    private void finishBeforeTransfer(String peerId) {
        try {
            beforeTransfer.get().get(BEFORE_TRANSFER_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException | RuntimeException e) {
            LOG.info("{}: transferring the leadership to {} without finishing what comes first: {}", nodeId, peerId,
                    e.toString());
        }
    }

    /**
     * Asks the group to make {@code peerId} the leader (Ratis' own transfer); returns when it leads
     * or fails after {@code timeout}.
     */
    void transferLeadership(String peerId, Duration timeout, java.util.function.Supplier<RaftNode.Status> status)
            throws IOException {
        long start = System.nanoTime();
        awaitCaughtUp(peerId, timeout, status);
        finishBeforeTransfer(peerId);
        long finished = System.nanoTime();
        // One attempt, never retried by the client: while a transfer is pending the leader refuses
        // every write, so the retries of the proposals' policy (up to a hundred, each pending for up
        // to the timeout) kept a leader refusing writes for minutes after a transfer to a node it
        // could not reach had failed, long after the caller had given up. Callers retry if they wish.
        // Its RPC waits for the transfer's own timeout: one shorter would give up on a transfer still
        // pending on the leader.
        org.apache.ratis.conf.RaftProperties longer = new org.apache.ratis.conf.RaftProperties(server.getProperties());
        org.apache.ratis.client.RaftClientConfigKeys.Rpc.setRequestTimeout(longer,
                TimeDuration.valueOf(timeout.toMillis() + 2_000, TimeUnit.MILLISECONDS));
        try (RaftClient once = clients.get().setProperties(longer).setRaftGroup(server.getDivision(groupId).getGroup())
                .setClientId(ClientId.randomId()).setRetryPolicy(RetryPolicies.noRetry()).build()) {
            long held = transferThrough(once, peerId, timeout);
            long end = System.nanoTime();
            LOG.info("{}: leadership transferred to {} in {} ms (finishing first {} ms, holding proposals {} ms, "
                    + "Ratis' transfer {} ms)", nodeId, peerId, (end - start) / 1_000_000, (finished - start) / 1_000_000,
                    (held - finished) / 1_000_000, (end - held) / 1_000_000);
        }
    }

    /** How recently a transferee must have answered the leader to count as caught up. */
    static final long CAUGHT_UP_CONTACT_MS = 1_000;

    /**
     * Whether follower {@code peerId} answered this leader within {@code freshMs} and matches all but
     * {@link GroupView#READY_MAX_LAG} of the committed entries (false for one this leader does not track).
     */
    static boolean caughtUp(RaftNode.Status s, String peerId, long freshMs) {
        Long match = s.followerMatchIndex().get(peerId);
        Long contact = s.followerLastContactMs().get(peerId);
        return match != null && contact != null && contact < freshMs && match >= s.commitIndex() - GroupView.READY_MAX_LAG;
    }

    /**
     * Waits, writes going on, until {@code peerId} has answered since this call began, within
     * {@link #CAUGHT_UP_CONTACT_MS}, and matches all but {@link GroupView#READY_MAX_LAG} of the committed entries, asking every 20 ms
     * for at most {@code timeout}. From the moment Ratis starts a transfer the leader refuses every
     * write until the transferee leads, so a transferee still catching up (a checkpoint to install
     * after a partition, a restart) stopped writes for as long as that took: 5 s twice in one chaos
     * run, up to the transfer's timeout. Fails, having stopped nothing, when it does not catch up.
     */
    static void awaitCaughtUp(String peerId, Duration timeout, java.util.function.Supplier<RaftNode.Status> status)
            throws IOException {
        long start = System.nanoTime();
        long giveUpAt = start + timeout.toNanos();
        while (true) {
            RaftNode.Status s = status.get();
            Long match = s.followerMatchIndex().get(peerId);
            Long contact = s.followerLastContactMs().get(peerId);
            if (match == null || contact == null) {
                return; // not a follower this leader tracks (or not the leader): Ratis answers for itself
            }
            // An answer from before this call does not count: a node stopped a moment ago still looks
            // fresh for a second, and Ratis' transfer to it refused writes for the whole timeout (CI).
            long sinceStartMs = (System.nanoTime() - start) / 1_000_000;
            boolean answeredSince = contact < sinceStartMs;
            if (answeredSince && caughtUp(s, peerId, CAUGHT_UP_CONTACT_MS)) {
                return;
            }
            if (System.nanoTime() >= giveUpAt) {
                throw new IOException("leadership transfer to " + peerId + " failed: " + (answeredSince
                        ? peerId + " is " + (s.commitIndex() - match) + " committed entries behind"
                        : peerId + " has not answered the leader for " + contact + " ms")
                        + " after " + timeout.toMillis() + " ms, and writes were not stopped for it; try again once it has caught up");
            }
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    /**
     * A hand-over's or the balancer's transfer: through the proposals' client, whose retry policy rides out a
     * transferee still catching up or a leader not ready yet — a closing leader has no second chance
     * (HandOverTest: one attempt left the group leaderless for an election timeout in CI).
     */
    void transferWithRetries(String peerId, Duration timeout) throws IOException {
        finishBeforeTransfer(peerId);
        transferThrough(client, peerId, timeout);
    }

    /**
     * Ratis' transfer through {@code via}, with this node's proposals held meanwhile (see
     * Proposer#hold). Addressed to the current leader explicitly: the client's cached leader may be
     * stale, and a non-leader answers DIFFERENT_LEADER instead of passing the request on.
     *
     * @return when the hold ended and Ratis' transfer began (System.nanoTime())
     */
    private long transferThrough(RaftClient via, String peerId, Duration timeout) throws IOException {
        RaftPeerId leader = server.getDivision(groupId).getInfo().getLeaderId();
        Runnable release = holdProposals.apply(HOLD_WAIT_MS);
        long held = System.nanoTime();
        try {
            RaftClientReply reply = via.admin().transferLeadership(RaftPeerId.valueOf(peerId), leader, timeout.toMillis());
            if (!reply.isSuccess()) {
                throw new IOException("leadership transfer to " + peerId + " failed: " + reply.getException());
            }
            return held;
        } finally {
            release.run();
        }
    }

    /**
     * Transfers this leader's leadership to its most caught-up follower among those that answered
     * within {@code freshMs}: a closing leader ({@code raft.handOverTimeout}), so the group has a new
     * leader the moment this one stops, without waiting for an election timeout or even for its
     * port to close; a leader whose clock is off ({@link ClockWatch}). Logs the outcome, saying
     * {@code why}; never throws.
     */
    void handOver(RaftNode.Status s, long freshMs, Duration timeout, String why) {
        String to = s.followerMatchIndex().entrySet().stream()
                .filter(e -> s.followerLastContactMs().getOrDefault(e.getKey(), Long.MAX_VALUE) < freshMs)
                .max(Map.Entry.comparingByValue()).map(Map.Entry::getKey).orElse(null);
        if (to == null) {
            return;
        }
        long start = System.nanoTime();
        try {
            transferWithRetries(to, timeout);
            LOG.info("{}: {}: handed leadership over to {} in {} ms", nodeId, why, to,
                    (System.nanoTime() - start) / 1_000_000);
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: {}: could not hand leadership over to {} ({}); the followers will elect one",
                    nodeId, why, to, e.toString());
        }
    }

    /**
     * The commit indexes server {@code peerId} knows: {@code [its own, this node's]} (-1 for one it
     * does not know).
     */
    long[] commitIndexesAt(String peerId) throws IOException {
        RaftPeerId peer = RaftPeerId.valueOf(peerId);
        var infos = client.getGroupManagementApi(peer).info(groupId).getCommitInfos();
        return new long[] {GroupView.commitIndexOf(peer, infos), GroupView.commitIndexOf(RaftPeerId.valueOf(nodeId), infos)};
    }

    /** Asks leader {@code leaderId} to step down (a transfer to no one); see {@link LostLogWatch}. */
    void askToStepDown(String leaderId, Duration timeout) throws IOException {
        RaftClientReply reply = client.admin().transferLeadership(null, RaftPeerId.valueOf(leaderId), timeout.toMillis());
        if (!reply.isSuccess()) {
            throw new IOException(leaderId + " did not step down: " + reply.getException());
        }
        LOG.info("{}: {} stepped down", nodeId, leaderId);
    }

    private static List<RaftNode.Member> toMembers(List<RaftPeer> peers) {
        return peers.stream().map(p -> new RaftNode.Member(p.getId().toString(), p.getAddress())).toList();
    }
}
