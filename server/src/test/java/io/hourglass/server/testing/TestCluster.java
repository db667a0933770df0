package io.hourglass.server.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A cluster of real nodes in one JVM: each its own Ratis server on a loopback port, its own
 * RocksDB and its own gRPC server. Nodes can be stopped (as SIGTERM would), started again, or
 * wiped. {@link #close()} stops every node that runs.
 */
public final class TestCluster implements AutoCloseable {
    private final Path root;
    private final List<TestNode> nodes = new ArrayList<>();
    private final List<Map<String, String>> settings = new ArrayList<>();

    private TestCluster(Path root, int size, Map<String, String> common) {
        this.root = root;
        List<String> peers = new ArrayList<>();
        for (int i = 1; i <= size; i++) {
            Map<String, String> s = new HashMap<>(common);
            s.put("node.id", "n" + i);
            TestNode.putPorts(s);
            peers.add("n" + i + "=127.0.0.1:" + s.get("raft.port") + ":" + s.get("grpc.port"));
            settings.add(s);
        }
        String peerList = String.join(",", peers);
        settings.forEach(s -> s.put("cluster.peers", peerList));
    }

    /**
     * Starts a new, empty node with {@code cluster.join=true} (it waits to be added with the
     * Admin API's AddNode) and returns it; it is closed with the cluster.
     */
    public TestNode startJoiner() {
        int index = nodes.size() + 1;
        Map<String, String> s = new HashMap<>(settings.get(0));
        s.put("node.id", "n" + index);
        TestNode.putPorts(s);
        s.put("cluster.join", "true");
        s.put("cluster.peers", settings.get(0).get("cluster.peers") + ",n" + index + "=127.0.0.1:"
                + s.get("raft.port") + ":" + s.get("grpc.port"));
        settings.add(s);
        TestNode node = TestNode.create(root.resolve("n" + index), s);
        nodes.add(node);
        node.boot();
        return node;
    }

    /** The settings a node was started with (ports, peers). */
    public Map<String, String> settingsOf(TestNode node) {
        return Map.copyOf(settings.get(nodes.indexOf(node)));
    }

    /** Starts {@code size} nodes and waits until one of them leads. */
    public static TestCluster start(Path root, int size, Map<String, String> settings) {
        TestCluster c = new TestCluster(root, size, settings);
        try {
            for (int i = 0; i < size; i++) {
                c.nodes.add(TestNode.create(root.resolve("n" + (i + 1)), c.settings.get(i)));
            }
            c.nodes.parallelStream().forEach(TestNode::boot);
            c.awaitLeader();
            return c;
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /**
     * Waits until a node leads shard 0 and one leads the metadata group (membership and security
     * calls need its leader; each group elects on its own), and returns shard 0's leader.
     */
    public TestNode awaitLeader() {
        await("a leader").atMost(Duration.ofSeconds(60))
                .until(() -> leader().isPresent() && nodes.stream().anyMatch(TestNode::leadsMetadata));
        return leader().orElseThrow();
    }

    public Optional<TestNode> leader() {
        return nodes.stream().filter(TestNode::leads).findFirst();
    }

    public List<TestNode> followers() {
        return nodes.stream().filter(n -> n.isRunning() && !n.leads()).toList();
    }

    public List<TestNode> nodes() {
        return List.copyOf(nodes);
    }

    public TestNode node(int oneBased) {
        return nodes.get(oneBased - 1);
    }

    /** Every node's client address, for a client's server list. */
    public String targets() {
        return nodes.stream().map(TestNode::target).collect(Collectors.joining(","));
    }

    /** Every node's client address as a list, the form {@code HourglassClient.Builder#servers} takes. */
    public List<String> targetList() {
        return nodes.stream().map(TestNode::target).toList();
    }

    /** The nodes that run now (stopped ones left out). */
    public List<TestNode> running() {
        return nodes.stream().filter(TestNode::isRunning).toList();
    }

    /** Waits until a running node other than {@code previous} leads, and returns it. */
    public TestNode awaitLeaderOtherThan(TestNode previous, Duration atMost) {
        await("a leader other than " + previous.id()).atMost(atMost)
                .until(() -> leader().filter(l -> l != previous).isPresent());
        return leader().orElseThrow();
    }

    /** Every node's state, one line each: what a failing cluster test prints. */
    public String describe() {
        return nodes.stream().map(TestNode::describe).collect(Collectors.joining("\n  ", "cluster:\n  ", ""));
    }

    /** Deletes a stopped node's data directory, so that it must catch up from the others. */
    public void wipe(TestNode node) {
        if (node.isRunning()) {
            throw new IllegalStateException("stop the node before wiping it");
        }
        try (Stream<Path> files = Files.walk(node.dataDir())) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Path root() {
        return root;
    }

    @Override
    public void close() {
        nodes.parallelStream().forEach(TestNode::close);
    }
}
