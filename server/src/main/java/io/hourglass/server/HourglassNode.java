package io.hourglass.server;

import io.grpc.Server;
import io.hourglass.core.command.PublishCoalescer;
import io.hourglass.core.command.PublishValidator;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.delivery.DeliveryEngine;
import io.hourglass.core.rooms.RoomEngine;
import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.RaftNode;
import io.hourglass.server.admin.AdminService;
import io.hourglass.server.config.NodeConfig;
import io.hourglass.server.grpc.BrokerService;
import io.hourglass.server.grpc.ClientPort;
import io.hourglass.server.grpc.StreamLimits;
import io.hourglass.server.grpc.RoomsService;
import io.hourglass.server.http.HealthHttpServer;
import java.nio.file.Path;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Hourglass node: the composition root. Components start in dependency order — store, Raft,
 * delivery and rooms engines, gRPC, HTTP — and {@link #close()} stops them in reverse, as the
 * SIGTERM hook does. Both engines follow Raft leadership through one callback.
 */
public final class HourglassNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HourglassNode.class);

    private final NodeConfig config;
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final NodeMetrics metrics = new NodeMetrics();
    /**
     * Publish entries being replicated at once; requests beyond wait and then share one entry. Four
     * keeps the Raft pipeline busy (an fsync carries several) while letting entries grow under load.
     */
    static final int PUBLISH_ENTRIES_IN_FLIGHT = 4;
    private PublishCoalescer publishes;
    private EventStore store;
    private DeliveryEngine engine;
    private RoomEngine rooms;
    private RaftNode raft;
    private Server grpc;
    private HealthHttpServer http;

    private HourglassNode(NodeConfig config) {
        this.config = config;
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
        LOG.info("starting node {} (data {}, grpc {}, raft {}, http {})", config.raft().nodeId(),
                config.dataDir(), config.grpcPort(), config.raft().raftPort(), config.httpPort());
        store = EventStore.open(config.dataDir().resolve("db"));
        started.push(store);
        StateApplier applier = new StateApplier(store);
        DeliveryEngine[] engineRef = new DeliveryEngine[1];
        RoomEngine[] roomsRef = new RoomEngine[1];
        RaftNode[] raftRef = new RaftNode[1];
        raft = new RaftNode(config.raft(), config.host(), config.grpcPort(), applier, clock,
                config.limits().maxBatchBytes() + (64 << 10), leads -> {
                    if (engineRef[0] != null) {
                        engineRef[0].setLeading(leads);
                    }
                    if (roomsRef[0] != null) {
                        roomsRef[0].setLeading(leads);
                    }
                });
        raftRef[0] = raft;
        TimedReplicator replicator = new TimedReplicator(raft, metrics);
        // Concurrent publish requests share log entries (group commit; PublishCoalescer).
        publishes = new PublishCoalescer(replicator, PUBLISH_ENTRIES_IN_FLIGHT, config.limits().maxBatchBytes());
        metrics.bindPublishCoalescer(publishes);
        engine = new DeliveryEngine(config.delivery(), store, replicator, clock);
        engineRef[0] = engine;
        applier.addListener(engine);
        rooms = new RoomEngine(config.rooms(), config.limits(), store, replicator, clock);
        roomsRef[0] = rooms;
        applier.addListener(rooms);
        metrics.bind(engine, raft);
        metrics.bindPeers(raft, config.raft().voters(config.host(), config.grpcPort()).stream()
                .map(io.hourglass.raft.RaftConfig.Peer::id).filter(id -> !id.equals(config.raft().nodeId())).toList());
        started.push(metrics);
        started.push(raft);
        started.push(engine);
        AutoCloseable closeRooms = closeOnce(rooms);
        started.push(closeRooms);
        engine.start();
        rooms.start();
        raft.start();

        ExecutorService writer = namedPool("hourglass-stream-writer-", Math.max(2, Runtime.getRuntime().availableProcessors()));
        started.push(() -> writer.shutdownNow());
        ScheduledExecutorService streamTimers = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hourglass-stream-timers");
            t.setDaemon(true);
            return t;
        });
        started.push(() -> streamTimers.shutdownNow());
        streamTimers.scheduleWithFixedDelay(this::removeSeriesOfGoneTopics, 1, 1, TimeUnit.MINUTES);
        StreamLimits streamLimits = new StreamLimits(streamTimers, config.grpc().initTimeout(), config.grpc().maxConsumers());
        PublishValidator validator = new PublishValidator(config.limits());
        AdminService admin = new AdminService(raft, replicator, store, engine, validator, clock,
                config.host() + ":" + config.grpcPort());
        started.push(admin);
        String self = config.host() + ":" + config.grpcPort();
        RoomsService roomsService = new RoomsService(rooms, writer, config.delivery().consumerQueueSize(),
                config.rooms().clientTimeout(), () -> {
                    String hint = replicator.leaderHint();
                    return self.equals(hint) ? null : hint; // a session this node ends should look elsewhere
                }, config.rooms().maxAckTimeout(), validator, streamLimits);
        metrics.bindRooms(rooms, roomsService);


        // Every call of the client port runs on this bounded pool: a burst of calls or cancellations
        // (2 000 streams closed at once) queues tasks instead of starting a thread for each.
        ExecutorService grpcCalls = namedPool("hourglass-grpc-", config.grpc().executorThreads());
        grpc = ClientPort.builder(config.bindHost(), config.grpcPort(), config.grpc(), grpcCalls,
                        config.limits().maxBatchBytes() * 2)
                .addService(new BrokerService(publishes, engine, validator, writer, metrics, streamLimits))
                .addService(roomsService)
                .addService(admin)
                .build()
                .start();
        started.push(() -> grpcCalls.shutdownNow());
        started.push(() -> {
            // The rooms engine stops before the server, out of stack order on purpose: its sessions then
            // end as "node shutting down". Were the streams cut first, each would reach the engine as its
            // client leaving, and a room left without members would drop its replicated backlog.
            closeRooms.close();
            grpc.shutdown();
            roomsService.endSessions("the node is shutting down"); // any the engine did not know yet
            if (!grpc.awaitTermination(3, TimeUnit.SECONDS)) {
                grpc.shutdownNow();
            }
        });
        http = new HealthHttpServer(config.bindHost(), config.http(), metrics::render, raft::hasLeader);
        http.start();
        started.push(http);
        LOG.info("node {} serving gRPC on {} and HTTP on {} (checkpoints for followers on the Raft port {})",
                config.raft().nodeId(), grpc.getPort(), http.port(), config.raft().raftPort());
    }

    /**
     * Drops the per-topic metric series of topics that are gone: no consumer here, nothing in flight,
     * no durable group and no stored message. Runs once a minute on the stream timer thread.
     */
    public int removeSeriesOfGoneTopics() {
        try {
            java.util.Set<String> consumed = new java.util.HashSet<>();
            engine.hub().consumers().forEach(c -> consumed.add(c.topic()));
            return metrics.removeTopicSeries(topic -> !consumed.contains(topic) && engine.inFlightCount(topic) == 0
                    && store.durableGroups(topic).isEmpty() && !hasStoredMessage(topic));
        } catch (RuntimeException e) {
            LOG.warn("removing metric series of gone topics failed: {}", e.toString());
            return 0;
        }
    }

    private boolean hasStoredMessage(String topic) {
        boolean[] any = {false};
        store.scanTopic(topic, (key, message) -> {
            any[0] = true;
            return false;
        });
        return any[0];
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
        return raft.checkpointChunksSent();
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

    public DeliveryEngine engine() {
        return engine;
    }

    public RoomEngine rooms() {
        return rooms;
    }

    public EventStore store() {
        return store;
    }

    public NodeMetrics metrics() {
        return metrics;
    }

    public NodeConfig config() {
        return config;
    }

    @Override
    public synchronized void close() {
        while (!started.isEmpty()) {
            AutoCloseable c = started.pop();
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("error while stopping {}: {}", c, e.toString());
            }
        }
        LOG.info("node {} stopped", config.raft().nodeId());
    }
}
