package io.hourglass.raft;

import io.hourglass.core.UnavailableException;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.disk.CorruptRaftLogException;
import io.hourglass.raft.disk.RaftLogCheck;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's replica of one Raft group — an event shard's, or the metadata group's (peer registry,
 * security state) —: the {@link HourglassStateMachine} of that group's store, held in the node's {@link RaftHost}, through which this node proposes the shard's
 * commands ({@link Replicator}). A standalone node is a group of one; there is no other storage path.
 * A one-shard node may be made with the public constructor, which makes, starts and closes its own
 * host.
 *
 * <pre>
 *   Ratis callbacks ──▶ HourglassStateMachine ──▶ LeadershipNotifier ──▶ LeadershipListeners
 *   (any thread)         (term of each signal)     (one thread, stale      (in epoch order)
 *                                                   signals dropped)
 *   propose ──▶ Proposer ──▶ own division while leading, else Forwarder ──▶ the leader this node knows
 *   store failure ──▶ FailStop (the host's) ──▶ Raft server closed once, failure listeners told
 *   (a failed apply, flush or log write; less free disk than node.minFreeDiskMb, looked at every second)
 * </pre>
 *
 * <p>The host's start first checks each shard's Raft log on disk ({@link RaftLogCheck}): a damaged
 * log stops the start with a {@link CorruptRaftLogException}, a torn tail is cut off.
 *
 * <p>Leadership reaches the listeners as {@link Leadership} changes, the leading one only once
 * this node leads <em>and</em> has applied the first entry of its term, so the dispatcher never
 * works from a stale store. {@link #isLeader()} is the last change published. Voters, transfers and
 * snapshots are the group's {@link #admin()} (a voter is added to every shard by the host), status
 * and lease in {@link GroupView}, the watches over log, disk and peers in {@link ShardGuards}.
 *
 * <p>Lifecycle: construct (or {@link RaftHost#addShard}), register listeners, start, close.
 */
public final class RaftNode implements Replicator, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RaftNode.class);
    /** Shard 0's group, the one group of a one-shard cluster; fixed, so restarted and new nodes find it. */
    public static final RaftGroupId GROUP_ID = RaftHost.groupId(0);

    /**
     * The id prefix of the throwaway members {@link #warmUp} runs: what a log filter matches to keep
     * their expected warnings out of the node's log.
     */
    public static final String WARM_UP_MEMBER_PREFIX = "hg-warmup-";

    /** Committed entries a follower may still have to apply and count as caught up. */
    static final long READY_MAX_LAG = GroupView.READY_MAX_LAG;

    private final RaftHost host;
    /** Whether this replica made its host (the one-shard constructor) and so starts and closes it. */
    private final boolean ownsHost;
    private final int shard;
    private final RaftGroupId groupId;
    private final RaftConfig config;
    private final RaftPeerId selfId;
    private final RaftServer server;
    private final RaftClient client;
    private final HourglassStateMachine stateMachine;
    private final EventStore store;
    private final CheckpointServer checkpointServer;
    private final LeadershipNotifier leadership;
    private final Forwarder forwarder;
    /** Package-private for tests. */
    final Proposer proposer;
    private final Membership membership;
    private final GroupView view;
    private final ShardGuards guards;
    private final GroupAdmin admin;
    private final PendingProposals pending;
    private final ShardHandOver handOver;

    /**
     * A node of one shard, which makes, starts and closes its own {@link RaftHost}.
     *
     * @param maxEntryBytes the largest command accepted (larger ones fail INVALID_ARGUMENT)
     * @param proposals     told how long each successful proposal took (metrics)
     */
    public RaftNode(RaftConfig config, String advertisedHost, int grpcPort, StateApplier applier, Clock clock,
                    int maxEntryBytes, ProposalObserver proposals) throws IOException {
        this(new RaftHost(config, advertisedHost, grpcPort, clock, maxEntryBytes, 1, false), 0, applier, proposals, true);
    }

    /** Shard {@code shard}'s replica on {@code host} ({@link RaftHost#addShard}). */
    RaftNode(RaftHost host, int shard, StateApplier applier, ProposalObserver proposals) throws IOException {
        this(host, shard, applier, proposals, false);
    }

    private RaftNode(RaftHost host, int shard, StateApplier applier, ProposalObserver proposals, boolean ownsHost)
            throws IOException {
        this.host = host;
        this.ownsHost = ownsHost;
        this.shard = shard;
        this.groupId = RaftHost.groupId(shard);
        this.config = host.config();
        this.selfId = host.selfId();
        this.server = host.server();
        int maxEntryBytes = host.maxEntryBytes();
        String label = shard == 0 ? config.nodeId() : config.nodeId() + "/" + (shard == GroupSlots.META ? "meta" : shard);
        this.leadership = new LeadershipNotifier(label);
        this.store = applier.store();
        FailStop failStop = host.failStop;
        this.pending = new PendingProposals(failStop, this::stoppedFailure);
        Path checkpointDir = RaftHost.shardDir(config.checkpointDir(), shard);
        CheckpointServer.deleteQuietly(checkpointDir); // leftovers of an interrupted transfer
        this.checkpointServer = new CheckpointServer(config.nodeId(), store, checkpointDir, config.maxCheckpointDownloads());
        PeerTransport transport = host.transport;
        CheckpointSource checkpoints = new CheckpointClient(config.nodeId(), shard, checkpointDir, host::raftAddressOf,
                transport.clientTls);
        this.stateMachine = new HourglassStateMachine(applier, host.clockWatch.clock(), maxEntryBytes, leadership,
                checkpoints, failStop, host.clockWatch::refusal, host::running);
        RaftGroup initial = host.initialGroup(shard);
        this.client = RaftClient.newBuilder().setClientId(ClientId.randomId()).setRaftGroup(initial)
                .setLeaderId(initial.getPeers().size() == 1 ? selfId : null).setProperties(host.properties)
                .setParameters(transport.parameters).setRetryPolicy(RatisSettings.retryPolicy(config)).build();
        this.view = new GroupView(config, server, groupId);
        ContactGuard contact = ContactGuard.of(config, view);
        // An attempt forwarded to a leader that neither answers nor is replaced in the division's
        // view is given up after the minimum election timeout (see Forwarder).
        this.forwarder = new Forwarder(label, client.getClientRpc(), groupId, selfId, view::leaderId, view::peers,
                this::submitToOwnDivision, config.electionTimeoutMin(), config.requestTimeout());
        leadership.addListener(change -> forwarder.leaderChanged());
        if (!ownsHost && (host.shards() > 1 || shard == GroupSlots.META)) {
            leadership.addListener(new EmptyStoreOpener(config.nodeId(), shard, store, this, this::isLeader,
                    host::closing, host.shards())::onLeadership);
        }
        this.proposer = new Proposer(server, groupId, forwarder, selfId, maxEntryBytes, config.requestTimeout(),
                this::grpcAddressOf, proposals, contact);
        this.membership = new Membership(config.nodeId(), server, client,
                () -> RaftClient.newBuilder().setProperties(host.properties).setParameters(transport.parameters), groupId,
                proposer::hold);
        this.handOver = new ShardHandOver(config, shard, membership, view, this::status, this::isLeader, host::closing);
        this.guards = new ShardGuards(host, shard, store, view, contact, stateMachine, membership, this::status,
                leadership, forwarder, checkpointServer);
        this.admin = new GroupAdmin(host, membership, client, this::status);
        host.register(shard, this);
    }

    private CompletableFuture<RaftClientReply> submitToOwnDivision(RaftClientRequest request) {
        try {
            return server.submitClientRequestAsync(request);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Registers a listener for leadership changes; register before {@link #start()} to hear them all. */
    public void addLeadershipListener(LeadershipListener listener) {
        leadership.addListener(listener);
    }

    /**
     * Registers what to do when this node finds itself cut off from the cluster (out of touch and
     * no majority reachable: {@link ContactGuard}; {@code true}) and when it is in touch again
     * ({@code false}). A leader cut off this way is deposed already, though Ratis may name it
     * leader for another second or two; work only a leader does should stop now.
     */
    public void addCutOffListener(Consumer<Boolean> listener) {
        guards.contact.addCutOffListener(listener);
    }

    /**
     * Registers what to do once this node stopped its Raft server after a store failure (see
     * {@link FailStop}); called on the thread that stopped it, after the stop.
     */
    public void addFailureListener(Consumer<Throwable> listener) {
        host.addFailureListener(listener);
    }

    /**
     * Starts the host this one-shard node made (see {@link RaftHost#start()}); a shard of a host made
     * elsewhere starts with that host.
     *
     * @throws CorruptRaftLogException when the log is damaged: the node must not run on it
     */
    public void start() throws IOException {
        if (!ownsHost) {
            throw new IllegalStateException("shard " + shard + " starts with its RaftHost");
        }
        host.start();
    }

    /** The guards and watches of this replica ({@link ShardGuards}). */
    ShardGuards guards() {
        return guards;
    }

    /** After a store failure: every pending proposal fails at once. */
    void failPending() {
        pending.failAll();
    }

    /** After a store failure, once the server stopped: the forwarder and client, which would retry against it. */
    void closeClients() throws IOException {
        forwarder.close();
        client.close();
    }

    /** Why this node stopped itself, if it did (see {@link FailStop#reason()}). */
    public Optional<String> failureReason() {
        return host.failureReason();
    }

    /** The store failure that stopped this node, if one did. */
    public Optional<Throwable> failure() {
        return host.failure();
    }

    /** How this shard's leadership is given away ({@link ShardHandOver}). */
    ShardHandOver handOver() {
        return handOver;
    }

    /** Ratis' follower append chain, for tests ({@link AppendChain}). */
    AppendChain appendChain() {
        return guards.watches.appendChain();
    }

    /** What this shard's Raft side counts ({@code /metrics}, tests). */
    public RaftCounters counters() {
        return guards.counters;
    }

    public Leadership leadership() {
        return leadership.current();
    }

    @Override
    public boolean isLeader() {
        return leadership.current().leading();
    }

    /** Proposes a command (see {@link Proposer}); refused at once after a store failure ({@link PendingProposals}). */
    @Override
    public CompletableFuture<CommandReply> propose(Command command) {
        return pending.track(() -> proposer.propose(command, isLeader()));
    }

    private UnavailableException stoppedFailure() {
        return new UnavailableException("node " + config.nodeId() + " stopped: "
                + host.failureReason().orElse("its store failed") + "; try another server", host.failure().orElse(null));
    }

    /**
     * The leader's client address, while it is live to this node: a follower that has not heard from
     * its leader for 3/4 of {@code raft.electionTimeoutMin} (heartbeats come every half of it) names
     * none, so that clients try another server instead of being sent to a leader that is dead, paused or
     * cut off. Nor, not itself, does a node elected but not ready: callers wait or retry it soon instead.
     */
    @Override
    public String leaderHint() {
        if (guards.contact.refusal() != null) {
            return null; // cut off: whatever it last knew is no guide
        }
        RaftPeerId leader = view.liveLeaderId(config.electionTimeoutMin().toMillis() * 3 / 4);
        boolean unready = leader != null && leader.toString().equals(config.nodeId()) && !isLeader();
        return leader == null || unready ? null : grpcAddressOf(leader.toString());
    }

    /** Why this node may not stamp entries now ({@link ClockWatch#refusal()}), or null. */
    String stampRefusal() {
        return host.clockWatch.refusal();
    }

    /**
     * See {@link GroupView#holdsLease()}; never while this node is not ready to lead, nor while its
     * clock is off the others' ({@link ClockWatch}): the dispatcher judges what is due by it.
     */
    @Override
    public boolean holdsLease() {
        return isLeader() && host.clockWatch.refusal() == null && view.holdsLease();
    }

    /**
     * Ready to serve (the readiness probe): part of a group with a known leader, and caught up —
     * a leader once it has applied everything before its term, a follower once it has applied
     * all but at most {@link #READY_MAX_LAG} of the entries its leader reports committed.
     */
    public Readiness readiness() {
        return view.readiness(isLeader());
    }

    /** This group's administration: voters, leadership transfers, snapshots ({@link GroupAdmin}). */
    public GroupAdmin admin() {
        return admin;
    }

    /** A point-in-time view of this node's Raft state, for status and metrics. */
    public record Status(String nodeId, String role, String leaderId, long term, long commitIndex, long appliedIndex,
                         Map<String, Long> followerMatchIndex, Map<String, Long> followerLastContactMs) {
    }

    public Status status() {
        return view.status();
    }

    /**
     * The client (gRPC) address of a peer, which Ratis does not know: from the replicated peer
     * registry (members added at run time), else from this node's configured peer list.
     */
    public String grpcAddressOf(String peerId) {
        return host.peerAddress(peerId).orElseGet(() -> config.peers().stream().filter(p -> p.id().equals(peerId))
                .map(RaftConfig.Peer::grpcAddress).findFirst().orElse(null));
    }

    /** A voter: its id and Raft address. */
    public record Member(String id, String raftAddress) {
    }

    public String nodeId() {
        return config.nodeId();
    }

    /** The event shard this replica holds; {@link RaftHost#METADATA} for the metadata group's. */
    public int shardIndex() {
        return shard;
    }

    /** The host of every shard of this node. */
    public RaftHost host() {
        return host;
    }

    Membership membership() {
        return membership;
    }

    CheckpointServer checkpointServer() {
        return checkpointServer;
    }

    LeaderExitWatch leaderExitWatch() {
        return guards.leaderExit;
    }

    public RaftServer server() {
        return server;
    }

    public HourglassStateMachine stateMachine() {
        return stateMachine;
    }

    /** This shard's store. */
    public EventStore store() {
        return store;
    }

    /** Closing, before the server stops: the watches and this shard's clients. */
    void closeBeforeServer() {
        guards.close();
        forwarder.close();
        try {
            client.close();
        } catch (IOException e) {
            LOG.warn("{}: closing shard {}'s Raft client: {}", config.nodeId(), shard, e.toString());
        }
    }

    /** Once the server stopped: the leadership listeners hear, last, that this node no longer leads. */
    void closeAfterServer() {
        leadership.close();
    }

    /**
     * Closes the host this one-shard node made (see {@link RaftHost#close()}); a shard of a host made
     * elsewhere closes with that host.
     */
    @Override
    public void close() throws IOException {
        if (ownsHost) {
            host.close();
        }
    }
}
