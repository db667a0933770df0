package io.hourglass.server.replica;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node-to-node replica port ({@code replica.port}): serves {@link CheckpointService} and nothing
 * else, apart from the client port, so that a client can neither reach the checkpoint service nor
 * starve it. Its calls run on a small pool of their own, sized to the download cap.
 */
public final class ReplicaServer implements AutoCloseable {
    private final Server server;
    private final ExecutorService executor;

    public ReplicaServer(String bindHost, int port, CheckpointService service, int maxConcurrentDownloads) {
        AtomicInteger n = new AtomicInteger();
        executor = Executors.newFixedThreadPool(maxConcurrentDownloads + 1, r -> {
            Thread t = new Thread(r, "hourglass-replica-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server = NettyServerBuilder.forAddress(new InetSocketAddress(bindHost, port))
                .executor(executor)
                .maxInboundMessageSize(64 << 10)
                .addService(service)
                .build();
    }

    public void start() throws IOException {
        server.start();
    }

    public int port() {
        return server.getPort();
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdown();
        if (!server.awaitTermination(3, TimeUnit.SECONDS)) {
            server.shutdownNow();
        }
        executor.shutdownNow();
    }
}
