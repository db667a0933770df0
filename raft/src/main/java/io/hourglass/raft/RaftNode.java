package io.hourglass.raft;

import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.UnavailableException;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.disk.CorruptRaftLogException;
import io.hourglass.raft.disk.RaftLogCheck;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's membership in the Hourglass Raft group: the Ratis server with the
 * {@link HourglassStateMachine}, through which this node proposes commands ({@link Replicator}). A standalone node is a group of one; there is no other storage path.
 *
 * <pre>
 *   Ratis callbacks ──▶ HourglassStateMachine ──▶ LeadershipNotifier ──▶ LeadershipListeners
 *   (any thread)         (term of each signal)     (one thread, stale      (in epoch order)
 *                                                   signals dropped)
 *   propose ──▶ Proposer ──▶ own division while leading, else Forwarder ──▶ the leader this node knows
 *   store failure ──▶ FailStop ──▶ Raft server closed once, failure listeners told
 *   (a failed apply, flush or log write; less free disk than node.minFreeDiskMb, looked at every second)
 * </pre>
 *
 * <p>{@link #start()} first checks the Raft log on disk ({@link RaftLogCheck}): a damaged log stops
 * the start with a {@link CorruptRaftLogException}, a torn tail is cut off.
 *
 * <p>Leadership reaches the listeners as {@link Leadership} changes, the leading one only once
 * this node leads <em>and</em> has applied the first entry of its term, so the dispatcher never
 * works from a stale store. {@link #isLeader()} is the last change published. Membership changes
 * are in {@link Membership}, status and lease in {@link GroupView}.
 *
 * <p>Lifecycle: construct, register listeners, {@link #start()}, {@link #close()}.
 */
public final class RaftNode implements Replicator, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RaftNode.class);
    /** The group that orders every command; fixed, so restarted and new nodes find it. */
    public static final RaftGroupId GROUP_ID =
            RaftGroupId.valueOf(UUID.nameUUIDFromBytes("hourglass-events-0".getBytes(StandardCharsets.UTF_8)));

    /**
     * The id prefix of the throwaway members {@link #warmUp} runs: what a log filter matches to keep
     * their expected warnings out of the node's log.
     */
    public static final String WARM_UP_MEMBER_PREFIX = "hg-warmup-";

    /** Committed entries a follower may still have to apply and count as caught up. */
    static final long READY_MAX_LAG = GroupView.READY_MAX_LAG;

    private final RaftConfig config;
    private final RaftPeerId selfId;
    private final RaftGroup group;
    private final RaftServer server;
    private final RaftClient client;
    private final HourglassStateMachine stateMachine;
    private final EventStore store;
    private final CheckpointServer checkpointServer;
    private final LeadershipNotifier leadership;
    private final FailStop failStop;
    private final AtomicBoolean closing = new AtomicBoolean();
    private final LogWatches watches;
    private final Forwarder forwarder;
    private final ClockWatch clockWatch;
    private final Proposer proposer;
    private final Membership membership;
    private final GroupView view;
    private final RaftCounters counters;
    private final PeerTransport transport;
    private final LeaderExitWatch leaderExit;
    private final ContactGuard contact;
    private final DiskGuard disk;
    private final PendingProposals pending;
    private volatile RaftWarmUp warmUp;

    /**
     * @param maxEntryBytes the largest command accepted (larger ones fail INVALID_ARGUMENT)
     * @param proposals     told how long each successful proposal took (metrics)
     */
    public RaftNode(RaftConfig config, String advertisedHost, int grpcPort, StateApplier applier, Clock clock,
                    int maxEntryBytes, ProposalObserver proposals) throws IOException {
        this.config = config;
        this.selfId = RaftPeerId.valueOf(config.nodeId());
        this.leadership = new LeadershipNotifier(config.nodeId());
        this.store = applier.store();
        this.disk = new DiskGuard(config, store, RatisSettings.writeBufferBytes(maxEntryBytes));
        this.failStop = new FailStop(config.nodeId(), this::stopAfterFailure, disk.freeSpace()::explain);
        this.pending = new PendingProposals(failStop, this::stoppedFailure);
        List<RaftPeer> peers = config.voters(advertisedHost, grpcPort).stream()
                .map(p -> RaftPeer.newBuilder().setId(p.id()).setAddress(p.raftAddress()).build())
                .toList();
        this.group = RaftGroup.valueOf(GROUP_ID, peers);
        CheckpointServer.deleteQuietly(config.checkpointDir()); // leftovers of an interrupted transfer
        this.checkpointServer = new CheckpointServer(config.nodeId(), store, config.checkpointDir(),
                config.maxCheckpointDownloads());
        this.transport = new PeerTransport(config, this::raftAddressOf);
        Parameters parameters = transport.parameters;
        SslContext checkpointTls = transport.clientTls;
        CheckpointSource checkpoints = new CheckpointClient(config.nodeId(), config.checkpointDir(), this::raftAddressOf,
                checkpointTls);
        this.clockWatch = new ClockWatch(config.nodeId(), clock, config.maxClockSkew(), this::otherVoters,
                transport.peers, this::handOverWhileSkewed);
        this.stateMachine = new HourglassStateMachine(applier, clock, maxEntryBytes, leadership, checkpoints, failStop,
                clockWatch::refusal);
        RaftProperties properties = RatisSettings.properties(config, maxEntryBytes);
        this.leaderExit = new LeaderExitWatch(config.nodeId(), this::raftServer, GROUP_ID, this::raftAddressOf,
                transport.peers, config.leaderExitStagger(), config.electionTimeoutMin());
        transport.serve(leaderExit, List.of(checkpointServer.definition(), clockWatch.definition(), leaderExit.definition()));
        this.server = RaftServer.newBuilder()
                .setServerId(selfId)
                // A joining node creates no group: the cluster adds it (GroupManagementApi.add).
                .setGroup(config.join() ? null : group)
                .setProperties(properties)
                .setParameters(parameters)
                .setStateMachine(stateMachine)
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
        this.client = RaftClient.newBuilder().setClientId(ClientId.randomId()).setRaftGroup(group)
                .setLeaderId(peers.size() == 1 ? selfId : null).setProperties(properties).setParameters(parameters)
                .setRetryPolicy(RatisSettings.retryPolicy(config)).build();
        this.view = new GroupView(config, server);
        this.contact = ContactGuard.of(config, view);
        // An attempt forwarded to a leader that neither answers nor is replaced in the division's
        // view is given up after the minimum election timeout (see Forwarder).
        this.forwarder = new Forwarder(config.nodeId(), client.getClientRpc(), selfId, view::leaderId, view::peers,
                this::submitToOwnDivision, config.electionTimeoutMin(), config.requestTimeout());
        leadership.addListener(change -> forwarder.leaderChanged());
        this.proposer = new Proposer(server, forwarder, selfId, maxEntryBytes, config.requestTimeout(), this::grpcAddressOf,
                proposals, contact);
        this.membership = new Membership(config.nodeId(), server, client,
                () -> RaftClient.newBuilder().setProperties(properties).setParameters(parameters));
        this.watches = new LogWatches(config, this::status, view, stateMachine::installing,
                stateMachine::downloadedFrom, membership);
        this.counters = new RaftCounters(leadership, watches, forwarder, clockWatch, leaderExit, transport.guard, checkpointServer,
                disk, transport.installNudges);
    }

    private CompletableFuture<RaftClientReply> submitToOwnDivision(RaftClientRequest request) {
        try {
            return server.submitClientRequestAsync(request);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Runs the Raft leader's code once in throwaway servers ({@link RaftWarmUp}), on a thread of its
     * own, so that this node's first leadership does not wait for the JVM to load it; {@link #close}
     * stops it. Call after {@link #start()}.
     */
    public CompletableFuture<Boolean> warmUp(Duration budget) {
        // On this node's own Raft host: a peer certificate names it (and is checked against it).
        String self = group.getPeers().stream().filter(p -> p.getId().equals(selfId)).map(RaftPeer::getAddress)
                .findFirst().orElse("127.0.0.1:0");
        RaftWarmUp w = new RaftWarmUp(config.nodeId(), config.storageDir().getParent(), self.substring(0, self.lastIndexOf(':')),
                org.apache.ratis.grpc.GrpcConfigKeys.TLS.conf(transport.parameters), budget);
        warmUp = w;
        return w.start();
    }

    /** Registers a listener for leadership changes; register before {@link #start()} to hear them all. */
    public void addLeadershipListener(LeadershipListener listener) {
        leadership.addListener(listener);
    }

    /**
     * Registers what to do once this node stopped its Raft server after a store failure (see
     * {@link FailStop}); called on the thread that stopped it, after the stop.
     */
    public void addFailureListener(Consumer<Throwable> listener) {
        failStop.addListener(listener);
    }

    /**
     * Checks the Raft log on disk, then starts the Raft server and this node's watches.
     *
     * @throws CorruptRaftLogException when the log is damaged: the node must not run on it
     */
    public void start() throws IOException {
        disk.checkLog().ifPresent(watches::logCutAt);
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            Optional<CorruptRaftLogException> corrupt = disk.corruptLogIn(e);
            if (corrupt.isPresent()) {
                throw corrupt.get();
            }
            throw e;
        }
        disk.watch(failStop, closing::get);
        clockWatch.start();
        watches.start();
        contact.start();
        leaderExit.start();
        LOG.info("{}: raft server started on port {} in group {} with peers {}", config.nodeId(), config.raftPort(),
                GROUP_ID, group.getPeers());
    }

    /**
     * The fail-stop thread: the store failed, so the Raft server stops (unless a close already does),
     * and the client, whose pending requests would retry against it, too.
     */
    private void stopAfterFailure(Throwable cause) {
        pending.failAll();
        if (!closing.get()) {
            try {
                server.close();
                forwarder.close();
                client.close();
                LOG.info("{}: raft server stopped after the store failure", config.nodeId());
            } catch (IOException | RuntimeException e) {
                LOG.warn("{}: stopping the raft server after the store failure: {}", config.nodeId(), e.toString());
            }
        }
    }

    /** Why this node stopped itself, if it did (see {@link FailStop#reason()}). */
    public Optional<String> failureReason() {
        return failStop.reason();
    }

    /** The store failure that stopped this node, if one did. */
    public Optional<Throwable> failure() {
        return failStop.cause();
    }

    /** A leader whose clock is off hands its leadership over (each verdict of {@link ClockWatch} while skewed). */
    private void handOverWhileSkewed() {
        if (!closing.get() && isLeader()) {
            membership.handOver(status(), config.electionTimeoutMin().toMillis(), config.electionTimeoutMax(),
                    "clock off the others'");
        }
    }

    private List<String> otherVoters() {
        return view.peers().stream().map(p -> p.getId().toString()).filter(id -> !id.equals(config.nodeId())).toList();
    }

    /** A leader about to close hands its leadership over first; see {@link Membership#handOver}. */
    private void handOver() {
        if (!config.handOverTimeout().isZero() && !closing.get() && isLeader()) {
            membership.handOver(status(), config.electionTimeoutMin().toMillis(), config.handOverTimeout(), "closing");
        }
    }

    /** Ratis' follower append chain, for tests ({@link AppendChain}). */
    AppendChain appendChain() {
        return watches.appendChain();
    }

    /** The Raft server (for watches made before it). */
    private RaftServer raftServer() {
        return server;
    }

    /** What this node's Raft side counts ({@code /metrics}, tests). */
    public RaftCounters counters() {
        return counters;
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
                + failStop.reason().orElse("its store failed") + "; try another server", failStop.cause().orElse(null));
    }

    @Override
    public String leaderHint() {
        RaftPeerId leader = view.leaderId();
        return leader == null ? null : grpcAddressOf(leader.toString());
    }

    /** Why this node may not stamp entries now ({@link ClockWatch#refusal()}), or null. */
    String stampRefusal() {
        return clockWatch.refusal();
    }

    /**
     * See {@link GroupView#holdsLease()}; never while this node is not ready to lead, nor while its
     * clock is off the others' ({@link ClockWatch}): the dispatcher judges what is due by it.
     */
    @Override
    public boolean holdsLease() {
        return isLeader() && clockWatch.refusal() == null && view.holdsLease();
    }

    /**
     * Ready to serve (the readiness probe): part of a group with a known leader, and caught up —
     * a leader once it has applied everything before its term, a follower once it has applied
     * all but at most {@link #READY_MAX_LAG} of the entries its leader reports committed.
     */
    public Readiness readiness() {
        return view.readiness(isLeader());
    }

    /**
     * Asks the group to make {@code peerId} the leader (Ratis' own transfer); returns when it leads
     * or fails after {@code timeout}.
     */
    public void transferLeadership(String peerId, Duration timeout) throws IOException {
        membership.transferLeadership(peerId, timeout);
    }

    /** Asks this node's state machine to take a snapshot now; returns its index. */
    public long snapshotNow(Duration timeout) throws IOException {
        return membership.snapshotNow(timeout);
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
        return store.peerAddress(peerId).orElseGet(() -> config.peers().stream().filter(p -> p.id().equals(peerId))
                .map(RaftConfig.Peer::grpcAddress).findFirst().orElse(null));
    }

    private String raftAddressOf(String peerId) {
        return membership.raftAddressOf(peerId);
    }

    /** A voter: its id and Raft address. */
    public record Member(String id, String raftAddress) {
    }

    /** The voters of the current configuration. */
    public List<Member> members() throws IOException {
        return membership.members();
    }

    /**
     * Adds a voter (see {@link Membership#addVoter}).
     *
     * @throws AlreadyExistsException when the id is already a member
     */
    public List<Member> addVoter(String id, String host, int raftPort) throws IOException {
        return membership.addVoter(id, host, raftPort);
    }

    /** Removes a voter that is not the leader (transfer leadership first); NotFoundException if it is none. */
    public List<Member> removeVoter(String id) throws IOException {
        return membership.removeVoter(id);
    }

    public String nodeId() {
        return config.nodeId();
    }

    public RaftServer server() {
        return server;
    }

    public HourglassStateMachine stateMachine() {
        return stateMachine;
    }

    /**
     * Stops the Raft server; the listeners then hear, after every earlier change, that this node
     * no longer leads.
     */
    @Override
    public void close() throws IOException {
        RaftWarmUp w = warmUp;
        if (w != null) {
            w.close();
        }
        handOver();
        closing.set(true);
        watches.close();
        disk.close();
        leaderExit.close();
        contact.close();
        clockWatch.close();
        forwarder.close();
        try {
            client.close();
        } finally {
            try {
                server.close();
            } finally {
                leadership.close();
                transport.close();
            }
        }
        LOG.info("{}: raft server closed", config.nodeId());
    }
}
