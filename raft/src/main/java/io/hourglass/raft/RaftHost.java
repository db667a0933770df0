package io.hourglass.raft;

import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.HourglassException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.ConfigException;
import io.hourglass.raft.disk.CorruptRaftLogException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.io.grpc.Attributes;
import org.apache.ratis.thirdparty.io.grpc.ServerTransportFilter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's Raft side: the one Ratis server that holds all of this node's groups — the metadata
 * group ({@code hourglass-metadata}: peer registry, security state) and one per event shard,
 * {@code hourglass-events-0} to {@code hourglass-events-(N-1)} ({@link GroupSlots}) — and what they share: the Raft
 * port with its transport security and the services next to Ratis' own (checkpoints, clock, log
 * ends, each asked for a shard), the clock watch, the free-space watch and the fail-stop. Each
 * shard's replica is a {@link RaftNode}, added with {@link #addShard} before {@link #start()}.
 *
 * <pre>
 *   RaftHost ── RaftServer (Ratis; one division per shard) ── PeerTransport (port, TLS, extra services)
 *      │         ClockWatch, FailStop, free-space watch (shard 0's DiskGuard)
 *      └── RaftNode metadata, RaftNode shard 0 … shard N-1   (state machine, leadership, forwarder, watches)
 * </pre>
 *
 * <p>The shard count is fixed when a node's data directory is created: it is written to
 * {@code <data>/shards} at the first start (a data directory without the file, from before shards,
 * holds one), and a later start with another {@code cluster.shards} is refused rather than
 * re-hashing every topic onto shards that do not hold it.
 *
 * <p>A new node creates shard 0's group through the server builder and the other shards' groups
 * through Ratis' group management right after the server starts; a restarted node recovers them
 * all from its storage; a joining node creates none (the cluster adds it to each,
 * {@link #addVoter}). Membership changes go to every group, the metadata group's first. A cluster
 * created before the metadata group ({@link #hasMetadataGroup()}) keeps its metadata in shard 0.
 *
 * <p>Lifecycle: construct, {@link #addShard} for every shard, {@link #start()}, {@link #close()}.
 */
public final class RaftHost implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RaftHost.class);
    /** The most shards a cluster may have: each costs a handful of threads on every node. */
    public static final int MAX_SHARDS = 64;

    private final RaftConfig config;
    private final RaftPeerId selfId;
    private final List<RaftPeer> initialPeers;
    private final int maxEntryBytes;
    final PeerTransport transport;
    final ClockWatch clockWatch;
    final FailStop failStop;
    final RaftProperties properties;
    private final RaftServer server;
    /** The replicas: one per event shard, and the metadata group's when the cluster has one. */
    private final GroupSlots slots;
    private final AtomicBoolean closing = new AtomicBoolean();
    /** The Raft server started (set once {@link #start()} got past it); with {@link #closing}, whether it runs. */
    private volatile boolean started;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong callIds = new AtomicLong();
    private volatile RaftWarmUp warmUp;
    private volatile PauseWatch pauseWatch;
    /** Spreads the shard leaderships over the nodes (periodically only with more than one shard). */
    private final LeaderBalancer balancer;

    /**
     * @param shards        the cluster's shard count ({@code cluster.shards}), 1 to {@link #MAX_SHARDS}
     * @param maxEntryBytes the largest command accepted (larger ones fail INVALID_ARGUMENT)
     * @param metadataGroup whether a new cluster gets a metadata group ({@code cluster.metadataGroup}); a
     *                      data directory keeps what it was created with ({@link #hasMetadataGroup()})
     */
    public RaftHost(RaftConfig config, String advertisedHost, int grpcPort, Clock clock, int maxEntryBytes, int shards,
                    boolean metadataGroup) throws IOException {
        if (shards < 1 || shards > MAX_SHARDS) {
            throw new ConfigException("cluster.shards must be between 1 and " + MAX_SHARDS + ", not " + shards);
        }
        this.config = config;
        this.maxEntryBytes = maxEntryBytes;
        this.selfId = RaftPeerId.valueOf(config.nodeId());
        boolean withMeta = ShardCountFile.metadataGroup(config.storageDir(), metadataGroup);
        if (metadataGroup && !withMeta) {
            LOG.info("{}: the data directory was created before the metadata group: the peer registry and the security "
                    + "state stay in shard 0", config.nodeId());
        }
        this.slots = new GroupSlots(config.nodeId(), shards, withMeta);
        this.balancer = new LeaderBalancer(config.nodeId(), this::replicas, closing::get);
        this.initialPeers = config.voters(advertisedHost, grpcPort).stream()
                .map(p -> RaftPeer.newBuilder().setId(p.id()).setAddress(p.raftAddress()).build())
                .toList();
        this.failStop = new FailStop(config.nodeId(), this::stopAfterFailure, this::explainFailure);
        this.transport = new PeerTransport(config, this::raftAddressOf);
        this.clockWatch = new ClockWatch(config.nodeId(), clock, config.maxClockSkew(), this::otherVoters,
                transport.peers, this::handOverWhileSkewed);
        this.properties = RatisSettings.properties(config, maxEntryBytes);
        if (config.join() && !ShardCountFile.hasGroups(config.storageDir())) {
            RatisSettings.delayFirstElection(properties);
        }
        transport.serve(new ExitFilter(), List.of(CheckpointServer.definition(this::checkpointServerOf),
                clockWatch.definition(), LeaderExitWatch.definition(this::exitWatchOf)));
        this.server = RaftServer.newBuilder()
                .setServerId(selfId)
                // A joining node creates no group: the cluster adds it (GroupManagementApi.add).
                .setGroup(config.join() ? null : RaftGroup.valueOf(groupId(0), initialPeers))
                .setProperties(properties)
                .setParameters(transport.parameters)
                .setStateMachineRegistry(slots::stateMachineOf)
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
    }

    /** The index that names the metadata group where a shard's index would ({@link #addMetadata}, {@link #shardDir}). */
    public static final int METADATA = GroupSlots.META;

    /**
     * The Raft group of event shard {@code shard} (shard 0's is the group of a cluster from before
     * shards), or of the metadata group for {@link #METADATA}.
     */
    public static RaftGroupId groupId(int shard) {
        return GroupSlots.groupId(shard);
    }

    /**
     * Where shard {@code shard} keeps a directory that shard 0 keeps at {@code dir}: {@code dir} itself
     * for shard 0 (so a node from before shards finds its files), {@code dir-<shard>} for the others,
     * {@code dir-meta} for the metadata group ({@link #METADATA}).
     */
    public static Path shardDir(Path dir, int shard) {
        return GroupSlots.dir(dir, shard);
    }

    /** The shard count of this host. */
    public int shards() {
        return slots.shardCount();
    }

    /**
     * Whether this node runs a metadata group next to its event shards: a cluster created with
     * {@code cluster.metadataGroup=true} (the default) does; one created before the metadata group
     * keeps the peer registry and the security state in shard 0.
     */
    public boolean hasMetadataGroup() {
        return slots.withMeta();
    }

    /**
     * Adds the replica of the metadata group (when {@link #hasMetadataGroup()}), which applies its
     * committed commands to {@code applier}'s store; call once, before {@link #start()}.
     */
    public synchronized RaftNode addMetadata(StateApplier applier, ProposalObserver proposals) throws IOException {
        return new RaftNode(this, METADATA, applier, proposals); // registers itself
    }

    /** The replica that holds the peer registry and security state: the metadata group's, or shard 0's. */
    public RaftNode metadata() {
        return slots.metadata();
    }

    /**
     * Adds the replica of shard {@code shard}, which applies its committed commands to
     * {@code applier}'s store; call once per shard, before {@link #start()}.
     *
     * @param proposals told how long each successful proposal took (metrics)
     */
    public synchronized RaftNode addShard(int shard, StateApplier applier, ProposalObserver proposals) throws IOException {
        return new RaftNode(this, shard, applier, proposals); // registers itself
    }

    /** Called by each replica's constructor, before it returns. */
    void register(int shard, RaftNode replica) {
        slots.register(shard, replica);
    }

    /** The replica of {@code shard}. */
    public RaftNode shard(int shard) {
        return slots.shard(shard);
    }

    /** Every event shard's replica, shard 0 first. */
    public List<RaftNode> replicas() {
        return slots.shards();
    }

    /** Every group's replica: the metadata group's first (when there is one), then every shard's. */
    public List<RaftNode> groups() {
        return slots.all();
    }

    RaftConfig config() {
        return config;
    }

    RaftPeerId selfId() {
        return selfId;
    }

    int maxEntryBytes() {
        return maxEntryBytes;
    }

    RaftServer server() {
        return server;
    }

    boolean closing() {
        return closing.get();
    }

    /** Started and not closing: a division that closes now was closed by Ratis, not by this node. */
    boolean running() {
        return started && !closing.get();
    }

    /** The group a new node creates for {@code shard}: the configured voters. */
    RaftGroup initialGroup(int shard) {
        return RaftGroup.valueOf(groupId(shard), initialPeers);
    }

    private CheckpointServer checkpointServerOf(int shard) {
        RaftNode r = slots.byIndex(shard);
        return r == null ? null : r.checkpointServer();
    }

    private LeaderExitWatch exitWatchOf(int shard) {
        RaftNode r = slots.byIndex(shard);
        return r == null ? null : r.leaderExitWatch();
    }

    /** A closed connection into the Raft port: each shard's watch looks whether its leader is gone. */
    private final class ExitFilter extends ServerTransportFilter {
        @Override
        public void transportTerminated(Attributes transportAttrs) {
            for (RaftNode r : slots.all()) {
                r.leaderExitWatch().transportTerminated(transportAttrs);
            }
        }
    }

    /**
     * Checks every shard's Raft log on disk, starts the Raft server, creates the groups a new node
     * lacks, then starts the watches.
     *
     * @throws CorruptRaftLogException when a log is damaged: the node must not run on it
     */
    public void start() throws IOException {
        slots.requireAll();
        ShardCountFile.check(config.storageDir(), slots.shardCount(), slots.withMeta());
        for (RaftNode r : slots.all()) {
            r.guards().checkLog();
        }
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            Optional<CorruptRaftLogException> corrupt = slots.shard(0).guards().corruptLogIn(e);
            if (corrupt.isPresent()) {
                throw corrupt.get();
            }
            throw e;
        }
        started = true;
        pauseWatch = PauseWatch.takeOver(server, config.nodeId());
        if (!config.join()) {
            createMissingGroups();
        }
        slots.shard(0).guards().watchFreeSpace(failStop, closing::get);
        clockWatch.start();
        for (RaftNode r : slots.all()) {
            r.guards().start();
        }
        if (slots.shardCount() > 1) {
            balancer.start();
        }
        LOG.info("{}: raft server started on port {} with {} shard group(s){}, peers {}", config.nodeId(),
                config.raftPort(), slots.shardCount(), slots.withMeta() ? " and a metadata group" : "", initialPeers);
    }

    /** Creates, on this new node, each group it does not hold yet, with the configured voters. */
    private void createMissingGroups() throws IOException {
        Set<RaftGroupId> held = new HashSet<>();
        server.getGroupIds().forEach(held::add);
        for (RaftGroupId id : slots.groupIds()) {
            if (!held.contains(id)) {
                RaftClientReply reply = server.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), selfId,
                        callIds.incrementAndGet(), RaftGroup.valueOf(id, initialPeers)));
                if (!reply.isSuccess()) {
                    throw new IOException(config.nodeId() + ": creating the Raft group " + id + " failed: "
                            + reply.getException());
                }
            }
        }
    }

    /**
     * Adds a voter to every shard's group, all at once (see {@link Membership#addVoter}); a group that
     * has it already is skipped, so a call that failed half-way can be repeated. Answers shard 0's voters.
     *
     * @throws AlreadyExistsException when the id is already a member of every group
     */
    List<RaftNode.Member> addVoter(String id, String host, int raftPort) throws IOException {
        balancer.changeStarted();
        try {
            return EveryShard.addVoter(slots.all(), id, host, raftPort, config.nodeId());
        } finally {
            balancer.changeEnded();
        }
    }

    /**
     * Removes a voter from every shard's group (transfer each shard's leadership away first); a group
     * without it is skipped.
     *
     * @throws NotFoundException when the id is a member of no group
     */
    List<RaftNode.Member> removeVoter(String id) throws IOException {
        balancer.changeStarted();
        try {
            return EveryShard.removeVoter(slots.all(), id);
        } finally {
            balancer.changeEnded();
        }
    }

    /** A shard's leadership handed from {@code from} (this node) to {@code to}. */
    public record Move(int shard, String from, String to) {
    }

    /** One pass of the leadership spread now (see {@link LeaderBalancer#rebalance()}). */
    public List<Move> rebalance() {
        return balancer.rebalance();
    }

    /** A pass asked for by an operator: failed shards are tried again at once. */
    public List<Move> rebalanceNow() {
        return balancer.rebalanceNow();
    }

    /** A member's client (gRPC) address from the replicated peer registry, in the metadata replica's store. */
    Optional<String> peerAddress(String peerId) {
        RaftNode r = slots.metadata();
        return r == null ? Optional.empty() : r.store().peerAddress(peerId);
    }

    /** A member's Raft {@code host:port}, from the metadata replica's configuration. */
    String raftAddressOf(String peerId) {
        RaftNode r = slots.metadata();
        return r == null ? null : r.membership().raftAddressOf(peerId);
    }

    private List<String> otherVoters() {
        RaftNode r = slots.metadata();
        return r == null ? List.of() : r.handOver().otherVoters();
    }

    private String explainFailure(Throwable failure) {
        RaftNode r = slots.shard(0);
        return r == null ? "" : r.guards().explainFailure(failure);
    }

    /** A leader whose clock is off hands each shard it leads over (each verdict of {@link ClockWatch} while skewed). */
    private void handOverWhileSkewed() { // each hand-over checks that the host is not closing
        slots.all().forEach(r -> r.handOver().whileSkewed());
    }

    /**
     * The fail-stop thread: the store failed, so the Raft server stops (unless a close already does),
     * and each shard's client, whose pending requests would retry against it, too.
     */
    private void stopAfterFailure(Throwable cause) {
        for (RaftNode r : slots.all()) {
            r.failPending();
        }
        if (!closing.get()) {
            try {
                server.close();
                for (RaftNode r : slots.all()) {
                    r.closeClients();
                }
                LOG.info("{}: raft server stopped after the store failure", config.nodeId());
            } catch (IOException | RuntimeException e) {
                LOG.warn("{}: stopping the raft server after the store failure: {}", config.nodeId(), e.toString());
            }
        }
    }

    /** Registers what to do once this node stopped its Raft server after a store failure ({@link FailStop}). */
    public void addFailureListener(Consumer<Throwable> listener) {
        failStop.addListener(listener);
    }

    /** Why this node stopped itself, if it did (see {@link FailStop#reason()}). */
    public Optional<String> failureReason() {
        return failStop.reason();
    }

    /** The store failure that stopped this node, if one did. */
    public Optional<Throwable> failure() {
        return failStop.cause();
    }

    /**
     * Runs the Raft leader's code once in throwaway servers ({@link RaftWarmUp}), on a thread of its
     * own, so that this node's first leadership does not wait for the JVM to load it; {@link #close}
     * stops it. Call after {@link #start()}.
     */
    public CompletableFuture<Boolean> warmUp(Duration budget) {
        // On this node's own Raft host: a peer certificate names it (and is checked against it).
        String self = initialPeers.stream().filter(p -> p.getId().equals(selfId)).map(RaftPeer::getAddress)
                .findFirst().orElse("127.0.0.1:0");
        RaftWarmUp w = new RaftWarmUp(config.nodeId(), config.storageDir().getParent(), self.substring(0, self.lastIndexOf(':')),
                org.apache.ratis.grpc.GrpcConfigKeys.TLS.conf(transport.parameters), budget);
        warmUp = w;
        return w.start();
    }

    /**
     * Hands over the shards this node leads, closes every replica and the Raft server; the listeners
     * then hear, after every earlier change, that this node no longer leads.
     */
    @Override
    public void close() throws IOException {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        slots.closeRegistry();
        RaftWarmUp w = warmUp;
        if (w != null) {
            w.close();
        }
        balancer.close();
        handOverAll();
        closing.set(true);
        for (RaftNode r : slots.all()) {
            r.closeBeforeServer();
        }
        clockWatch.close();
        try {
            server.close();
            Optional.ofNullable(pauseWatch).ifPresent(PauseWatch::close);
        } finally {
            for (RaftNode r : slots.all()) {
                r.closeAfterServer();
            }
            transport.close();
        }
        LOG.info("{}: raft server closed", config.nodeId());
    }

    /** Hands each led shard over at once, in parallel: a closing node's shards elect no later than one would. */
    private void handOverAll() {
        List<Thread> handOvers = new ArrayList<>();
        for (RaftNode r : slots.all()) {
            if (r.isLeader()) {
                Thread t = new Thread(r.handOver()::beforeClose, "hourglass-hand-over-" + config.nodeId() + "-" + r.shardIndex());
                t.setDaemon(true);
                t.start();
                handOvers.add(t);
            }
        }
        // Bounded: a transfer retries while its transferee is unreachable (every node closing at once
        // hung a test's close for good); past it the node closes and the group elects as after a crash.
        long deadline = System.nanoTime() + config.handOverTimeout().plusSeconds(1).toNanos();
        for (Thread t : handOvers) {
            try {
                t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public String toString() {
        return "RaftHost[" + config.nodeId() + ", shards " + slots.shardCount() + (slots.withMeta() ? " + metadata" : "") + "]";
    }
}
