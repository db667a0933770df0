package io.hourglass.raft;

import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.HourglassException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.ConfigException;
import io.hourglass.raft.disk.CorruptRaftLogException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
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
import org.apache.ratis.statemachine.StateMachine;
import org.apache.ratis.thirdparty.io.grpc.Attributes;
import org.apache.ratis.thirdparty.io.grpc.ServerTransportFilter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's Raft side: the one Ratis server that holds all of this node's groups — one per event
 * shard, {@code hourglass-events-0} to {@code hourglass-events-(N-1)} — and what they share: the Raft
 * port with its transport security and the services next to Ratis' own (checkpoints, clock, log
 * ends, each asked for a shard), the clock watch, the free-space watch and the fail-stop. Each
 * shard's replica is a {@link RaftNode}, added with {@link #addShard} before {@link #start()}.
 *
 * <pre>
 *   RaftHost ── RaftServer (Ratis; one division per shard) ── PeerTransport (port, TLS, extra services)
 *      │         ClockWatch, FailStop, free-space watch (shard 0's DiskGuard)
 *      └── RaftNode shard 0 … RaftNode shard N-1   (state machine, leadership, forwarder, watches)
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
 * {@link #addVoter}). Membership changes go to every shard's group, shard 0's first.
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
    private final RaftNode[] replicas;
    /** Each shard's replica once made, for the state machine registry. */
    private final CompletableFuture<RaftNode>[] registered;
    private final AtomicBoolean closing = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong callIds = new AtomicLong();
    private volatile RaftWarmUp warmUp;
    /** Spreads the shard leaderships over the nodes (periodically only with more than one shard). */
    private final LeaderBalancer balancer;

    /**
     * @param shards        the cluster's shard count ({@code cluster.shards}), 1 to {@link #MAX_SHARDS}
     * @param maxEntryBytes the largest command accepted (larger ones fail INVALID_ARGUMENT)
     */
    public RaftHost(RaftConfig config, String advertisedHost, int grpcPort, Clock clock, int maxEntryBytes, int shards)
            throws IOException {
        if (shards < 1 || shards > MAX_SHARDS) {
            throw new ConfigException("cluster.shards must be between 1 and " + MAX_SHARDS + ", not " + shards);
        }
        this.config = config;
        this.maxEntryBytes = maxEntryBytes;
        this.selfId = RaftPeerId.valueOf(config.nodeId());
        this.replicas = new RaftNode[shards];
        @SuppressWarnings("unchecked")
        CompletableFuture<RaftNode>[] futures = new CompletableFuture[shards];
        for (int i = 0; i < shards; i++) {
            futures[i] = new CompletableFuture<>();
        }
        this.registered = futures;
        this.balancer = new LeaderBalancer(config.nodeId(), this::replicas, closing::get);
        this.initialPeers = config.voters(advertisedHost, grpcPort).stream()
                .map(p -> RaftPeer.newBuilder().setId(p.id()).setAddress(p.raftAddress()).build())
                .toList();
        this.failStop = new FailStop(config.nodeId(), this::stopAfterFailure, this::explainFailure);
        this.transport = new PeerTransport(config, this::raftAddressOf);
        this.clockWatch = new ClockWatch(config.nodeId(), clock, config.maxClockSkew(), this::otherVoters,
                transport.peers, this::handOverWhileSkewed);
        this.properties = RatisSettings.properties(config, maxEntryBytes);
        transport.serve(new ExitFilter(), List.of(CheckpointServer.definition(this::checkpointServerOf),
                clockWatch.definition(), LeaderExitWatch.definition(this::exitWatchOf)));
        this.server = RaftServer.newBuilder()
                .setServerId(selfId)
                // A joining node creates no group: the cluster adds it (GroupManagementApi.add).
                .setGroup(config.join() ? null : RaftGroup.valueOf(groupId(0), initialPeers))
                .setProperties(properties)
                .setParameters(transport.parameters)
                .setStateMachineRegistry(this::stateMachineOf)
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
    }

    /** The Raft group of event shard {@code shard}; shard 0's is the group of a cluster from before shards. */
    public static RaftGroupId groupId(int shard) {
        return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(("hourglass-events-" + shard).getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * Where shard {@code shard} keeps a directory that shard 0 keeps at {@code dir}: {@code dir} itself
     * for shard 0 (so a node from before shards finds its files), {@code dir-<shard>} for the others.
     */
    public static Path shardDir(Path dir, int shard) {
        return shard == 0 ? dir : dir.resolveSibling(dir.getFileName() + "-" + shard);
    }

    /** The shard count of this host. */
    public int shards() {
        return replicas.length;
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
    synchronized void register(int shard, RaftNode replica) {
        if (shard < 0 || shard >= replicas.length || replicas[shard] != null) {
            throw new IllegalArgumentException("shard " + shard + " of " + replicas.length + " is not free");
        }
        replicas[shard] = replica;
        registered[shard].complete(replica);
    }

    /** The replica of {@code shard}. */
    public RaftNode shard(int shard) {
        return replicas[shard];
    }

    /** Every shard's replica, shard 0 first. */
    public List<RaftNode> replicas() {
        return List.of(replicas);
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

    /** The group a new node creates for {@code shard}: the configured voters. */
    RaftGroup initialGroup(int shard) {
        return RaftGroup.valueOf(groupId(shard), initialPeers);
    }

    /**
     * The registry Ratis asks for a group's state machine; it may ask while the server is being built,
     * before the replicas exist (it recovers the groups on disk on a thread of its own), so a known
     * shard's answer waits for that shard's replica.
     */
    private StateMachine stateMachineOf(RaftGroupId id) {
        for (int i = 0; i < replicas.length; i++) {
            if (groupId(i).equals(id)) {
                try {
                    return registered[i].get(REGISTRY_WAIT_SECONDS, java.util.concurrent.TimeUnit.SECONDS).stateMachine();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(config.nodeId() + ": interrupted waiting for shard " + i, e);
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    throw new IllegalStateException(config.nodeId() + ": shard " + i + " has no replica", e);
                }
            }
        }
        throw new IllegalStateException(config.nodeId() + " has no shard for Raft group " + id + " (it runs "
                + replicas.length + " shards: cluster.shards must be the same on every node)");
    }

    /** How long Ratis' recovery of a group waits for the shard's replica to be made. */
    private static final long REGISTRY_WAIT_SECONDS = 60;

    private CheckpointServer checkpointServerOf(int shard) {
        RaftNode r = shard >= 0 && shard < replicas.length ? replicas[shard] : null;
        return r == null ? null : r.checkpointServer();
    }

    private LeaderExitWatch exitWatchOf(int shard) {
        RaftNode r = shard >= 0 && shard < replicas.length ? replicas[shard] : null;
        return r == null ? null : r.leaderExitWatch();
    }

    /** A closed connection into the Raft port: each shard's watch looks whether its leader is gone. */
    private final class ExitFilter extends ServerTransportFilter {
        @Override
        public void transportTerminated(Attributes transportAttrs) {
            for (RaftNode r : replicas) {
                if (r != null) {
                    r.leaderExitWatch().transportTerminated(transportAttrs);
                }
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
        for (int i = 0; i < replicas.length; i++) {
            if (replicas[i] == null) {
                throw new IllegalStateException("shard " + i + " has no replica; addShard every shard before start");
            }
        }
        ShardCountFile.check(config.storageDir(), replicas.length);
        for (RaftNode r : replicas) {
            r.checkLog();
        }
        try {
            server.start();
        } catch (IOException | RuntimeException e) {
            Optional<CorruptRaftLogException> corrupt = replicas[0].corruptLogIn(e);
            if (corrupt.isPresent()) {
                throw corrupt.get();
            }
            throw e;
        }
        if (!config.join()) {
            createMissingGroups();
        }
        replicas[0].watchFreeSpace(failStop, closing::get);
        clockWatch.start();
        for (RaftNode r : replicas) {
            r.startWatches();
        }
        if (replicas.length > 1) {
            balancer.start();
        }
        LOG.info("{}: raft server started on port {} with {} shard group(s), peers {}", config.nodeId(),
                config.raftPort(), replicas.length, initialPeers);
    }

    /** Creates, on this new node, each shard group it does not hold yet, with the configured voters. */
    private void createMissingGroups() throws IOException {
        Set<RaftGroupId> held = new HashSet<>();
        server.getGroupIds().forEach(held::add);
        for (int i = 1; i < replicas.length; i++) {
            if (!held.contains(groupId(i))) {
                RaftClientReply reply = server.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), selfId,
                        callIds.incrementAndGet(), initialGroup(i)));
                if (!reply.isSuccess()) {
                    throw new IOException(config.nodeId() + ": creating the group of shard " + i + " failed: "
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
            return EveryShard.addVoter(List.of(replicas), id, host, raftPort, config.nodeId());
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
            return EveryShard.removeVoter(List.of(replicas), id);
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

    /** A member's client (gRPC) address from the replicated peer registry, which shard 0's store holds. */
    Optional<String> peerAddress(String peerId) {
        RaftNode r = replicas[0];
        return r == null ? Optional.empty() : r.store().peerAddress(peerId);
    }

    /** A member's Raft {@code host:port}, from shard 0's configuration. */
    String raftAddressOf(String peerId) {
        RaftNode r = replicas[0];
        return r == null ? null : r.membership().raftAddressOf(peerId);
    }

    private List<String> otherVoters() {
        RaftNode r = replicas[0];
        return r == null ? List.of() : r.handOver().otherVoters();
    }

    private String explainFailure(Throwable failure) {
        RaftNode r = replicas[0];
        return r == null ? "" : r.explainFailure(failure);
    }

    /** A leader whose clock is off hands each shard it leads over (each verdict of {@link ClockWatch} while skewed). */
    private void handOverWhileSkewed() { // each hand-over checks that the host is not closing
        java.util.Arrays.stream(replicas).filter(java.util.Objects::nonNull).forEach(r -> r.handOver().whileSkewed());
    }

    /**
     * The fail-stop thread: the store failed, so the Raft server stops (unless a close already does),
     * and each shard's client, whose pending requests would retry against it, too.
     */
    private void stopAfterFailure(Throwable cause) {
        for (RaftNode r : replicas) {
            if (r != null) {
                r.failPending();
            }
        }
        if (!closing.get()) {
            try {
                server.close();
                for (RaftNode r : replicas) {
                    if (r != null) {
                        r.closeClients();
                    }
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
        for (CompletableFuture<RaftNode> f : registered) {
            f.completeExceptionally(new IllegalStateException(config.nodeId() + " is closing"));
        }
        RaftWarmUp w = warmUp;
        if (w != null) {
            w.close();
        }
        balancer.close();
        handOverAll();
        closing.set(true);
        for (RaftNode r : replicas) {
            if (r != null) {
                r.closeBeforeServer();
            }
        }
        clockWatch.close();
        try {
            server.close();
        } finally {
            for (RaftNode r : replicas) {
                if (r != null) {
                    r.closeAfterServer();
                }
            }
            transport.close();
        }
        LOG.info("{}: raft server closed", config.nodeId());
    }

    /** Hands each led shard over at once, in parallel: a closing node's shards elect no later than one would. */
    private void handOverAll() {
        List<Thread> handOvers = new ArrayList<>();
        for (RaftNode r : replicas) {
            if (r != null && r.isLeader()) {
                Thread t = new Thread(r.handOver()::beforeClose, "hourglass-hand-over-" + config.nodeId() + "-" + r.shardIndex());
                t.setDaemon(true);
                t.start();
                handOvers.add(t);
            }
        }
        for (Thread t : handOvers) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public String toString() {
        return "RaftHost[" + config.nodeId() + ", shards " + Arrays.stream(replicas).filter(r -> r != null).count() + "]";
    }
}
