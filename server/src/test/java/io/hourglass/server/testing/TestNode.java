package io.hourglass.server.testing;

import static org.awaitility.Awaitility.await;

import io.hourglass.core.config.Settings;
import io.hourglass.server.HourglassNode;
import io.hourglass.server.config.NodeConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * A real node for tests: real Ratis over loopback sockets, real RocksDB in a test directory, real
 * gRPC. Ports are chosen free once and kept across {@link #restart()}, so clients reconnect to the
 * same address. Always close it (try-with-resources or {@code @AfterEach}).
 */
public final class TestNode implements AutoCloseable {
    private final Path dataDir;
    private final Map<String, String> settings;
    private HourglassNode node;

    private TestNode(Path dataDir, Map<String, String> overrides) {
        this.dataDir = dataDir;
        this.settings = new HashMap<>();
        settings.put("node.id", "n1");
        settings.put("node.dataDir", dataDir.toString());
        settings.put("node.bindHost", "127.0.0.1");
        settings.put("grpc.port", Integer.toString(freePort()));
        settings.put("raft.port", Integer.toString(freePort()));
        settings.put("http.port", Integer.toString(freePort()));
        settings.putAll(overrides);
    }

    /** Starts a standalone node and waits until it leads. */
    public static TestNode start(Path dataDir) {
        return start(dataDir, Map.of());
    }

    public static TestNode start(Path dataDir, Map<String, String> settings) {
        TestNode n = new TestNode(dataDir, settings);
        n.boot();
        n.awaitLeading();
        return n;
    }

    /** A node that is not started yet (cluster members start together). */
    static TestNode create(Path dataDir, Map<String, String> settings) {
        return new TestNode(dataDir, settings);
    }

    void boot() {
        try {
            node = HourglassNode.start(NodeConfig.from(new Settings(settings)), Clock.systemUTC());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void awaitLeading() {
        await("node " + settings.get("node.id") + " leads").atMost(Duration.ofSeconds(30)).until(node::isLeader);
    }

    public boolean isRunning() {
        return node != null;
    }

    public String id() {
        return settings.get("node.id");
    }

    /** Stops the node (as SIGTERM would) and starts it again on the same data and ports. */
    public void restart() {
        node.close();
        boot();
        if (!settings.containsKey("cluster.peers")) {
            awaitLeading();
        }
    }

    /** Stops the node; {@link #startAgain()} brings it back. */
    public void stop() {
        node.close();
        node = null;
    }

    public void startAgain() {
        boot();
        if (!settings.containsKey("cluster.peers")) {
            awaitLeading();
        }
    }

    public HourglassNode node() {
        return node;
    }

    public String target() {
        return "127.0.0.1:" + settings.get("grpc.port");
    }

    public int httpPort() {
        return Integer.parseInt(settings.get("http.port"));
    }

    public Path dataDir() {
        return dataDir;
    }

    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        if (node != null) {
            node.close();
            node = null;
        }
    }
}
