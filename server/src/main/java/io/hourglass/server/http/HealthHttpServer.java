package io.hourglass.server.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * {@code /metrics} (Prometheus text), {@code /healthz} (the process is up) and {@code /readyz}
 * (the node is in a group with a leader and has caught up) on the node's HTTP port.
 */
public final class HealthHttpServer implements AutoCloseable {
    private final HttpServer server;
    private final ExecutorService executor;

    public HealthHttpServer(String bindHost, int port, Supplier<String> metrics, BooleanSupplier ready) throws IOException {
        server = HttpServer.create(new InetSocketAddress(bindHost, port), 16);
        executor = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "hourglass-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/metrics", ex -> respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.get()));
        server.createContext("/healthz", ex -> respond(ex, 200, "text/plain", "ok\n"));
        server.createContext("/readyz", ex -> {
            boolean ok = ready.getAsBoolean();
            respond(ex, ok ? 200 : 503, "text/plain", ok ? "ready\n" : "not ready: no leader or not caught up\n");
        });
    }

    public void start() {
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void respond(HttpExchange ex, int code, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(code, bytes.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
