package io.hourglass.server;

import io.grpc.BindableService;
import io.grpc.Server;
import io.hourglass.core.command.PublishCoalescer;
import io.hourglass.core.command.PublishValidator;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.delivery.DeliveryEngine;
import io.hourglass.core.delivery.DeliveryWarmUp;
import io.hourglass.core.rooms.RoomApplier;
import io.hourglass.core.rooms.RoomEngine;
import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.RaftHost;
import io.hourglass.raft.RaftNode;
import io.hourglass.server.shard.EngineLeadership;
import io.hourglass.server.shard.Shards;
import java.util.ArrayList;
import io.hourglass.raft.disk.FreeSpace;
import io.hourglass.server.admin.AdminService;
import io.hourglass.server.config.NodeConfig;
import io.hourglass.server.grpc.BrokerService;
import io.hourglass.client.ChannelFactory;
import io.hourglass.client.ClientCredentials;
import io.hourglass.core.security.AccessControl;
import io.hourglass.core.security.SecurityApplier;
import io.hourglass.core.storage.SecurityRecords;
import io.hourglass.raft.tls.PemTls;
import io.hourglass.server.security.AuthInterceptor;
import io.hourglass.server.security.SecurityCounters;
import io.hourglass.server.security.SecurityService;
import io.hourglass.server.config.SecurityConfig;
import io.hourglass.server.grpc.ClientPort;
import io.hourglass.server.grpc.ReadinessHealth;
import io.hourglass.server.grpc.StreamLimits;
import io.hourglass.server.console.ConsoleApi;
import io.hourglass.server.grpc.RoomEngines;
import io.hourglass.server.grpc.RoomsService;
import io.hourglass.server.http.HealthHttpServer;
import java.nio.file.Path;
import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Hourglass node: the composition root. Its components form a {@link ComponentStack}, started
 * in dependency order — store, metrics, delivery and rooms engines, Raft, stream pools, admin,
 * gRPC, its health service, HTTP — and closed in reverse by {@link #close()}, as the SIGTERM hook
 * does, so gRPC health turns NOT_SERVING before the port stops. Both engines
 * follow this node's Raft leadership as listeners of {@link RaftNode}; a store failure, which
 * stops the Raft server, stops the whole node.
 */
public final class HourglassNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HourglassNode.class);

    private final NodeConfig config;
    private final ComponentStack stack;
    private final NodeMetrics metrics = new NodeMetrics();
    private final SecurityCounters securityCounters = new SecurityCounters();
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private PublishCoalescer publishes;
    private EventStore store;
    private DeliveryEngine engine;
    private RoomEngine rooms;
    private RaftNode raft;
    /** The replica of the metadata group, or shard 0's in a cluster without one. */
    private RaftNode meta;
    private RaftHost raftHost;
    private Shards shards;
    private Server grpc;
    private HealthHttpServer http;

    private HourglassNode(NodeConfig config) {
        this.config = config;
        this.stack = new ComponentStack(config.raft().nodeId());
    }

    /** Builds and starts a node; on failure everything already started is closed again. */
    public static HourglassNode start(NodeConfig config, Clock clock) throws IOException {
        HourglassNode node = new HourglassNode(config);
        try {
            node.startComponents(clock);
            return node;
        } catch (IOException | RuntimeException e) {
            node.close();
            throw e;
        }
    }

    private void startComponents(Clock clock) throws IOException {
        String nodeId = config.raft().nodeId();
        LOG.info("starting node {} (data {}, grpc {}, raft {}, http {})", nodeId,
                config.dataDir(), config.grpcPort(), config.raft().raftPort(), config.httpPort());
        // Before anything writes: RocksDB and Ratis both leave files damaged when a write fails on a full disk.
        new FreeSpace(java.util.List.of(config.dataDir()), config.raft().minFreeDiskBytes()).requireAtStart();
        int shardCount = config.shards();
        raftHost = new RaftHost(config.raft(), config.host(), config.grpcPort(), clock,
                config.limits().maxBatchBytes() + (64 << 10), shardCount, config.metadataGroup());
        stack.push("raft host", raftHost); // closed last of the shard parts (the stores after it)
        List<Shards.Shard> parts = new ArrayList<>();
        AccessControl access = null;
        SecurityRecords securityRecords = null;
        SecurityConfig security = config.security();
        String bootstrapToken = security.bootstrapTokenFile() == null ? null : readToken(security.bootstrapTokenFile());
        RaftNode metaRaft = null;
        if (raftHost.hasMetadataGroup()) { // the peer registry and the security state, apart from every topic
            EventStore metaStore = EventStore.open(RaftHost.shardDir(config.dataDir().resolve("db"), RaftHost.METADATA));
            stack.push("metadata store", metaStore);
            securityRecords = new SecurityRecords(metaStore);
            StateApplier applier = new StateApplier(metaStore, new RoomApplier(metaStore), new SecurityApplier(securityRecords));
            access = new AccessControl(securityRecords, security.superUsers(), bootstrapToken);
            applier.addListener(access.listener());
            metaStore.addRestoreListener(access::reload);
            metaRaft = raftHost.addMetadata(applier, metrics::recordPropose);
        }
        for (int i = 0; i < shardCount; i++) {
            String suffix = shardCount == 1 ? "" : " " + i;
            EventStore shardStore = EventStore.open(RaftHost.shardDir(config.dataDir().resolve("db"), i));
            stack.push("store" + suffix, shardStore);
            // The queue's commands are the seam's own; each further domain registers its applier here.
            SecurityRecords records = new SecurityRecords(shardStore);
            StateApplier applier = new StateApplier(shardStore, new RoomApplier(shardStore), new SecurityApplier(records));
            if (i == 0 && metaRaft == null) { // without a metadata group, shard 0 holds the security state and peers
                securityRecords = records;
                access = new AccessControl(records, security.superUsers(), bootstrapToken);
                applier.addListener(access.listener());
                shardStore.addRestoreListener(access::reload);
            }
            RaftNode shardRaft = raftHost.addShard(i, applier, metrics::recordPropose);
            // Concurrent publish requests share log entries (group commit; PublishCoalescer).
            PublishCoalescer coalescer = new PublishCoalescer(shardRaft, config.publishEntriesInFlight(),
                    config.limits().maxBatchBytes());
            DeliveryEngine shardEngine = new DeliveryEngine(config.delivery(), shardStore, shardRaft, clock);
            applier.addListener(shardEngine);
            // A planned transfer replicates the pending ACKs first: the next leader does not deliver them again.
            shardRaft.admin().beforeTransfer(shardEngine::flushDeletes);
            // Each shard's rooms: their gates and sessions run on that shard's leader.
            RoomEngine shardRooms = new RoomEngine(config.rooms(), config.limits(), shardStore, shardRaft, clock);
            applier.addListener(shardRooms);
            EngineLeadership engines = new EngineLeadership(
                    List.of((on, term) -> shardEngine.setLeading(on), shardRooms::setLeading));
            shardRaft.addLeadershipListener(change -> engines.leading(change.leading(), change.term()));
            shardRaft.addCutOffListener(engines::cutOff);
            if (i == 0) {
                store = shardStore;
                raft = shardRaft;
                publishes = coalescer;
                engine = shardEngine;
                rooms = shardRooms;
            }
            parts.add(new Shards.Shard(i, shardStore, shardRaft, coalescer, shardEngine, shardRooms));
        }
        shards = new Shards(parts);
        meta = metaRaft == null ? raft : metaRaft;
        for (Shards.Shard part : parts) { // a dead-letter topic on another shard: its copy goes there first
            part.engine().deadLetterRoute(topic -> {
                Shards.Shard owner = shards.of(topic);
                return owner.index() == part.index() ? null : owner.publisher();
            });
        }
        AccessControl accessControl = access;
        raftHost.addFailureListener(this::stopAfterStoreFailure);
        List<String> otherPeers = config.raft().voters(config.host(), config.grpcPort()).stream()
                .map(io.hourglass.raft.RaftConfig.Peer::id).filter(id -> !id.equals(nodeId)).toList();
        for (Shards.Shard part : shards.all()) {
            // One shard: the series carry no shard label, as before shards.
            String label = shardCount == 1 ? null : Integer.toString(part.index());
            metrics.bindPublishCoalescer((PublishCoalescer) part.publisher(), label);
            metrics.bind(part.engine(), part.raft(), label);
            metrics.bindPeers(part.raft(), otherPeers, label);
        }
        if (metaRaft != null) {
            metrics.bindMetadata(metaRaft);
        }
        metrics.bindDueWithin(new DueWithin(shards.all().stream().map(Shards.Shard::store).toList(), clock));
        stack.push("metrics", metrics);
        for (Shards.Shard part : shards.all()) {
            stack.push("delivery engine" + (shardCount == 1 ? "" : " " + part.index()), part.engine()::start, part.engine());
        }
        List<AutoCloseable> roomClosers = new ArrayList<>();
        for (Shards.Shard part : shards.all()) {
            AutoCloseable closeRooms = closeOnce(part.rooms());
            roomClosers.add(closeRooms);
            stack.push("rooms engine" + (shardCount == 1 ? "" : " " + part.index()), part.rooms()::start, closeRooms);
        }
        // After the engines, so that they run when the first leadership change reaches them; and
        // closed before them, so that they hear that this node no longer leads.
        stack.push("raft", raftHost::start, raftHost);

        ExecutorService writer = stack.push("stream writers", new ClosingPool(
                namedPool("hourglass-stream-writer-", Math.max(2, Runtime.getRuntime().availableProcessors())))).pool();
        ScheduledExecutorService streamTimers = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hourglass-stream-timers");
            t.setDaemon(true);
            return t;
        });
        stack.push("stream timers", new ClosingPool(streamTimers));
        streamTimers.scheduleWithFixedDelay(this::removeSeriesOfGoneTopics, 1, 1, TimeUnit.MINUTES);
        StreamLimits streamLimits = new StreamLimits(streamTimers, config.grpc().initTimeout(), config.grpc().maxConsumers(),
                config.raft().leaderExitStagger());
        PublishValidator validator = new PublishValidator(config.limits());
        String self = config.host() + ":" + config.grpcPort();
        // Calls this node makes to other nodes' client ports (admin fan-out): their TLS, and the
        // bootstrap token, which every node of a secured cluster holds.
        ClientCredentials peerCalls = security.clientTls() == null && bootstrapToken == null ? ClientCredentials.NONE
                : new ClientCredentials(security.clientTls() != null, security.clientCaFile(), null, null, bootstrapToken);
        // Every call of the client port runs on this bounded pool: a burst of calls or cancellations
        // (2 000 streams closed at once) queues tasks instead of starting a thread for each.
        ExecutorService grpcCalls = stack.push("grpc call pool",
                new ClosingPool(namedPool("hourglass-grpc-", config.grpc().executorThreads()))).pool();
        AdminService admin = stack.push("admin service", new AdminService(meta, shards, validator, clock, self,
                ChannelFactory.secured(peerCalls), metrics::publishedTotal, streamTimers, grpcCalls));
        RoomEngines roomEngines = new RoomEngines(shards.all().stream().map(Shards.Shard::rooms).toList(), shard -> {
            String hint = shards.get(shard).raft().leaderHint();
            return self.equals(hint) ? null : hint; // a session this node ends should look elsewhere
        });
        RoomsService roomsService = new RoomsService(roomEngines, admin::peerChannel, writer,
                config.delivery().consumerQueueSize(), config.rooms().clientTimeout(), config.rooms().maxAckTimeout(),
                validator, streamLimits);
        for (Shards.Shard part : shards.all()) {
            metrics.bindRooms(part.rooms(), shardCount == 1 ? null : Integer.toString(part.index()));
        }
        metrics.bindRoomSessions(roomsService);
        metrics.bindSecurity(securityCounters);

        PemTls clientTls = security.clientTls() == null ? null : stack.push("client TLS", new PemTls("client port",
                security.clientTls().certFile(), security.clientTls().keyFile(), security.clientCaFile(),
                security.clientTls().reloadEvery(), false));
        List<BindableService> services = List.of(
                new BrokerService(shards, validator, writer, metrics, streamLimits),
                roomsService, admin, new SecurityService(meta, securityRecords, security.enabled(),
                        // Bounded: a node that is down never confirms, and an operator's call should not hang on it.
                        index -> meta.admin().awaitAllCommitted(index, java.time.Duration.ofSeconds(1))));
        // grpc.health.v1 answers what /readyz does, for each of these services and for the server ("").
        ReadinessHealth health = new ReadinessHealth(nodeId, this::readiness,
                services.stream().map(s -> s.bindService().getServiceDescriptor().getName()).toList());
        var builder = ClientPort.builder(config.bindHost(), config.grpcPort(), config.grpc(), grpcCalls,
                config.limits().maxBatchBytes() * 2,
                clientTls == null ? null : ClientPort.serverTls(clientTls, security.clientAuth()));
        services.forEach(builder::addService);
        ClientPort.reflection().forEach(builder::addService);
        builder.addService(health.service());
        if (security.enabled()) {
            builder.intercept(new AuthInterceptor(accessControl, securityCounters)); // added last: runs first
        } else {
            LOG.warn("node {}: security is off (security.enabled=false): anyone who can reach its ports can read every "
                    + "message and administer the cluster", nodeId);
        }
        grpc = builder.build();
        stack.push("client port", grpc::start, () -> {
            // The rooms engine stops before the server, out of stack order on purpose: its sessions then
            // end as "node shutting down". Were the streams cut first, each would reach the engine as its
            // client leaving, and a room left without members would drop its replicated backlog.
            for (AutoCloseable closeRooms : roomClosers) {
                closeRooms.close();
            }
            grpc.shutdown();
            roomsService.endSessions("the node is shutting down"); // any the engine did not know yet
            if (!grpc.awaitTermination(3, TimeUnit.SECONDS)) {
                grpc.shutdownNow();
            }
        });
        // Closed before the port: every status turns NOT_SERVING while the port still answers.
        stack.push("grpc health", health::start, health);
        // The console calls this node's own client port with the caller's token: its TLS, no token of its own.
        ConsoleApi console = !config.http().console() ? null : stack.push("console", new ConsoleApi(
                ChannelFactory.secured(security.clientTls() == null ? ClientCredentials.NONE
                        : new ClientCredentials(true, security.clientCaFile(), null, null, null))
                        .open(io.hourglass.client.ServerAddress.parse(self)), nodeId, shardCount));
        http = new HealthHttpServer(config.bindHost(), config.http(), clientTls == null ? null : clientTls.keyManager(),
                security.enabled() ? bearer -> bearer != null && accessControl.principalOfToken(bearer).isPresent() : null,
                metrics::render, this::readiness, console);
        stack.push("http", http::start, http);
        if (config.warmUp()) { // in the background: Raft's leader side, then the delivery engine's
            CompletableFuture<Boolean> raftWarm = raftHost.warmUp(java.time.Duration.ofSeconds(20)); // closed with Raft
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            CompletableFuture<?> deliveryWarm = raftWarm.handleAsync((r, e) -> stop.get() || DeliveryWarmUp.run(
                    config.dataDir().resolve("warmup-delivery"), java.time.Duration.ofSeconds(10), stop::get),
                    task -> {
                        Thread t = new Thread(task, "hourglass-warmup-delivery");
                        t.setDaemon(true);
                        t.start();
                    });
            stack.push("delivery warm-up", (AutoCloseable) () -> {
                stop.set(true); // not started yet (Raft's still runs, stopped with Raft): it never will
                if (raftWarm.isDone()) {
                    deliveryWarm.handle((r, e) -> null).get(15, TimeUnit.SECONDS);
                }
            });
        }
        LOG.info("node {} serving gRPC on {} and HTTP on {} (checkpoints for followers on the Raft port {})",
                nodeId, grpc.getPort(), http.port(), config.raft().raftPort());
    }

    /**
     * Ready when the metadata group and every shard are (see {@link RaftNode#readiness()}): a node
     * that cannot serve one of them is not ready. Not ready names the first group that is not.
     */
    public io.hourglass.raft.Readiness readiness() {
        if (meta != raft) {
            io.hourglass.raft.Readiness m = meta.readiness();
            if (!m.ready()) {
                return new io.hourglass.raft.Readiness(false, "metadata group: " + m.detail());
            }
            java.util.OptionalInt recorded = meta.store().clusterShards();
            if (recorded.isPresent() && recorded.getAsInt() != shards.count()) {
                return new io.hourglass.raft.Readiness(false, "this node runs cluster.shards=" + shards.count()
                        + " but the cluster was created with " + recorded.getAsInt());
            }
        }
        if (shards.count() == 1) {
            return raft.readiness();
        }
        for (Shards.Shard part : shards.all()) {
            io.hourglass.raft.Readiness r = part.raft().readiness();
            if (!r.ready()) {
                return new io.hourglass.raft.Readiness(false, "shard " + part.index() + ": " + r.detail());
            }
        }
        return new io.hourglass.raft.Readiness(true, "ready (" + shards.count() + " shards)");
    }

    /** The first line of a token file, trimmed. */
    private static String readToken(java.nio.file.Path file) throws IOException {
        String token = io.hourglass.client.ClientCredentials.readTokenFile(file);
        if (token.length() < 16) {
            throw new io.hourglass.core.config.ConfigException("security.bootstrapTokenFile " + file
                    + " must hold a token of at least 16 characters on its first line");
        }
        return token;
    }

    /**
     * The Raft server stopped itself because the node's storage failed — the store, the Raft log or the
     * disk under them (it logged the ERROR) — or Ratis closed one of its groups ({@link
     * io.hourglass.raft.GroupClosedException}): this node can serve nothing any more, so it stops as a
     * whole. Runs on the thread that stopped the server.
     */
    private void stopAfterStoreFailure(Throwable cause) {
        boolean groupClosed = raft.failure().orElse(cause) instanceof io.hourglass.raft.GroupClosedException;
        LOG.warn("node {} stops: {}: {}", config.raft().nodeId(), groupClosed ? "a Raft group of it closed" : "its store failed",
                raft.failureReason().orElse(cause.toString()));
        close();
    }

    /** Completes once the node has stopped: closed by its owner, or after a store failure. */
    public CompletableFuture<Void> stopped() {
        return stopped;
    }

    /**
     * Drops the per-topic metric series of topics that are gone: no consumer here, nothing in flight,
     * no durable group and no stored message. Runs once a minute on the stream timer thread.
     */
    public int removeSeriesOfGoneTopics() {
        try {
            java.util.Set<String> consumed = new java.util.HashSet<>();
            shards.all().forEach(part -> part.engine().hub().consumers().forEach(c -> consumed.add(c.topic())));
            return metrics.removeTopicSeries(topic -> {
                Shards.Shard part = shards.of(topic);
                return !consumed.contains(topic) && part.engine().inFlightCount(topic) == 0
                        && part.store().durableGroups(topic).isEmpty() && !hasStoredMessage(part.store(), topic);
            });
        } catch (RuntimeException e) {
            LOG.warn("removing metric series of gone topics failed: {}", e.toString());
            return 0;
        }
    }

    private static boolean hasStoredMessage(EventStore store, String topic) {
        AtomicBoolean any = new AtomicBoolean();
        store.queue().scanTopic(topic, (key, message) -> {
            any.set(true);
            return false; // the first one answers the question
        });
        return any.get();
    }

    /** A fixed pool of named daemon threads. */
    private static ExecutorService namedPool(String prefix, int threads) {
        AtomicInteger n = new AtomicInteger();
        return Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** An executor as a component: closing it stops its threads at once. */
    private record ClosingPool(ExecutorService pool) implements AutoCloseable {
        @Override
        public void close() {
            pool.shutdownNow();
        }
    }

    /** Closes {@code c} on the first call only. */
    private static AutoCloseable closeOnce(AutoCloseable c) {
        AtomicBoolean closed = new AtomicBoolean();
        return () -> {
            if (closed.compareAndSet(false, true)) {
                c.close();
            }
        };
    }

    public int grpcPort() {
        return grpc.getPort();
    }

    /** Checkpoint chunks this node has sent to followers (tests). */
    public long checkpointChunksSent() {
        return raft.counters().checkpointChunksSent();
    }

    public int httpPort() {
        return http.port();
    }

    public boolean isLeader() {
        return raft != null && raft.isLeader();
    }

    public RaftNode raft() {
        return raft;
    }

    /** The replica that holds the peer registry and the security state ({@link RaftHost#metadata()}). */
    public RaftNode metadata() {
        return meta;
    }

    public DeliveryEngine engine() {
        return engine;
    }

    public RoomEngine rooms() {
        return rooms;
    }

    public EventStore store() {
        return store;
    }

    /** This node's event shards (one, shard 0, unless {@code cluster.shards} says more). */
    public Shards shards() {
        return shards;
    }

    /** The Raft side of every shard of this node. */
    public RaftHost raftHost() {
        return raftHost;
    }

    public NodeMetrics metrics() {
        return metrics;
    }

    public NodeConfig config() {
        return config;
    }

    /** Closes every component in reverse start order; a second call waits for the first and returns. */
    @Override
    public synchronized void close() {
        if (stopped.isDone()) {
            return;
        }
        stack.close();
        LOG.info("node {} stopped", config.raft().nodeId());
        stopped.complete(null);
    }
}
