package io.hourglass.server;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.hourglass.core.command.PublishValidator;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.delivery.DeliveryEngine;
import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.RaftNode;
import io.hourglass.server.config.NodeConfig;
import io.hourglass.server.grpc.BrokerService;
import io.hourglass.server.http.HealthHttpServer;
import io.hourglass.server.replica.CheckpointDownloader;
import io.hourglass.server.replica.CheckpointService;
import java.nio.file.Path;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Hourglass node: the composition root. Components start in dependency order — store, Raft,
 * delivery, gRPC, HTTP — and {@link #close()} stops them in reverse, as the SIGTERM hook does.
 */
public final class HourglassNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HourglassNode.class);

    private final NodeConfig config;
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final NodeMetrics metrics = new NodeMetrics();
    private EventStore store;
    private DeliveryEngine engine;
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
        LOG.info("starting node {} (data {}, grpc {}, raft {}, http {})", config.raft().nodeId(), config.dataDir(),
                config.grpcPort(), config.raft().raftPort(), config.httpPort());
        store = EventStore.open(config.dataDir().resolve("db"));
        started.push(store);
        StateApplier applier = new StateApplier(store);
        DeliveryEngine[] engineRef = new DeliveryEngine[1];
        RaftNode[] raftRef = new RaftNode[1];
        Path checkpoints = config.dataDir().resolve("checkpoints");
        CheckpointService.deleteQuietly(checkpoints); // leftovers of an interrupted transfer
        raft = new RaftNode(config.raft(), config.host(), config.grpcPort(), applier, clock,
                config.limits().maxBatchBytes() + (64 << 10), leads -> {
                    if (engineRef[0] != null) {
                        engineRef[0].setLeading(leads);
                    }
                }, new CheckpointDownloader(config.raft().nodeId(), checkpoints, id -> raftRef[0].grpcAddressOf(id)));
        raftRef[0] = raft;
        TimedReplicator replicator = new TimedReplicator(raft, metrics);
        engine = new DeliveryEngine(config.delivery(), store, replicator, clock);
        engineRef[0] = engine;
        applier.addListener(engine);
        metrics.bind(engine, raft);
        metrics.bindPeers(raft, config.raft().voters(config.host(), config.grpcPort()).stream()
                .map(io.hourglass.raft.RaftConfig.Peer::id).filter(id -> !id.equals(config.raft().nodeId())).toList());
        started.push(metrics);
        started.push(raft);
        started.push(engine);
        engine.start();
        raft.start();

        AtomicInteger writerThreads = new AtomicInteger();
        ExecutorService writer = Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()), r -> {
            Thread t = new Thread(r, "hourglass-stream-writer-" + writerThreads.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        started.push(() -> writer.shutdownNow());
        PublishValidator validator = new PublishValidator(config.limits());
        grpc = NettyServerBuilder.forAddress(new InetSocketAddress(config.bindHost(), config.grpcPort()))
                .maxInboundMessageSize(config.limits().maxBatchBytes() * 2)
                .addService(new BrokerService(replicator, engine, validator, writer, metrics))
                .addService(new CheckpointService(store, checkpoints))
                .build()
                .start();
        started.push(() -> {
            grpc.shutdown();
            if (!grpc.awaitTermination(3, TimeUnit.SECONDS)) {
                grpc.shutdownNow();
            }
        });
        http = new HealthHttpServer(config.bindHost(), config.httpPort(), metrics::render, raft::hasLeader);
        http.start();
        started.push(http);
        LOG.info("node {} serving gRPC on {} and HTTP on {}", config.raft().nodeId(), grpc.getPort(), http.port());
    }

    public int grpcPort() {
        return grpc.getPort();
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
