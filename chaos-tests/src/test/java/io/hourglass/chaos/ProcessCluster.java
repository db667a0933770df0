package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The nodes of one Raft group, each a {@link ServerProcess} on loopback. All ports are chosen
 * before the first node starts, so that every node's {@code --peers} names every voter, and they
 * stay fixed across restarts. A cluster of one is a standalone node (no {@code --peers}).
 *
 * <p>The leader is read from each node's {@code /metrics} gauge {@code hourglass_is_leader}.
 * Not thread-safe: one test thread drives it. {@link #close()} kills every node that still runs
 * and deletes its data; the logs stay under the run directory.
 */
public final class ProcessCluster implements AutoCloseable {
    private static final Duration POLL = Duration.ofMillis(200);
    private static final String LEADER_GAUGE = "hourglass_is_leader";

    private final List<ServerProcess> nodes;

    private ProcessCluster(List<ServerProcess> nodes) {
        this.nodes = List.copyOf(nodes);
    }

    /** Creates (does not start) {@code size} nodes {@code n1 … nN} in {@code runDir}. */
    public static ProcessCluster create(Distribution distribution, Path runDir, int size) {
        return create(distribution, runDir, size, java.util.Map.of());
    }

    /** As {@link #create(Distribution, Path, int)}, every node started with {@code env} (e.g. {@code HOURGLASS_*} settings). */
    static ProcessCluster create(Distribution distribution, Path runDir, int size, java.util.Map<String, String> env) {
        return create(distribution, runDir, size, env, java.util.Map.of());
    }

    /**
     * As {@link #create(Distribution, Path, int, java.util.Map)}, and node {@code id} also with
     * {@code envByNode.get(id)} (e.g. an {@code LD_PRELOAD} that slows its disk).
     */
    static ProcessCluster create(Distribution distribution, Path runDir, int size, java.util.Map<String, String> env,
                                 java.util.Map<String, java.util.Map<String, String>> envByNode) {
        if (size < 1) {
            throw new IllegalArgumentException("a cluster needs at least one node: " + size);
        }
        List<NodePorts> ports = distinctPorts(size);
        List<String> peers = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            peers.add(ports.get(i).peerEntry(nodeId(i)));
        }
        List<ServerProcess> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            nodes.add(ServerProcess.member(distribution, runDir, nodeId(i), ports.get(i),
                    size == 1 ? List.of() : peers).withEnv(env).withEnv(envByNode.getOrDefault(nodeId(i), java.util.Map.of())));
        }
        return new ProcessCluster(nodes);
    }

    private static String nodeId(int index) {
        return "n" + (index + 1);
    }

    private static List<NodePorts> distinctPorts(int size) {
        List<NodePorts> ports = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            ports.add(NodePorts.allocate());
        }
        return ports;
    }

    public List<ServerProcess> nodes() {
        return nodes;
    }

    /** The node whose client gRPC address is {@code address} ({@code 127.0.0.1:port}). */
    public ServerProcess nodeAt(String address) {
        return nodes.stream().filter(n -> n.ports().grpcAddress().equals(address)).findFirst()
                .orElseThrow(() -> new AssertionError("no node listens on " + address + "; nodes: " + nodes.stream()
                        .map(n -> n.nodeId() + "=" + n.ports().grpcAddress()).toList()));
    }

    /** Every node's client gRPC address, {@code 127.0.0.1:port}, in node order. */
    public List<String> clientAddresses() {
        return nodes.stream().map(n -> n.ports().grpcAddress()).toList();
    }

    /**
     * Launches every node, then waits until each answers {@code /readyz}: a group member is
     * ready only once a quorum has elected a leader, so they must all be running first.
     */
    public void startAll(Duration readyTimeout) {
        nodes.forEach(ServerProcess::start);
        nodes.forEach(n -> n.awaitReady(readyTimeout));
    }

    /**
     * Waits until exactly one running node reports itself leader and returns it. Killed nodes
     * are not asked; a node that does not answer counts as not leading.
     */
    public ServerProcess awaitLeader(Duration timeout) {
        try {
            return await("a single leader").atMost(timeout).pollInterval(POLL)
                    .until(this::soleLeader, Optional::isPresent).orElseThrow();
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("no single leader within " + timeout + "; " + leadershipReport(), e);
        }
    }

    private Optional<ServerProcess> soleLeader() {
        List<ServerProcess> leaders = nodes.stream().filter(ServerProcess::isAlive)
                .filter(n -> leaderGauge(n).orElse(false)).toList();
        return leaders.size() == 1 ? Optional.of(leaders.get(0)) : Optional.empty();
    }

    /** What each node's gauge says right now, for failure messages. */
    public String leadershipReport() {
        return nodes.stream().map(n -> n.nodeId() + (n.isAlive()
                        ? " leader=" + leaderGauge(n).map(String::valueOf).orElse("?")
                        : " down"))
                .collect(Collectors.joining(", ", "[", "]"));
    }

    /**
     * The node's {@code hourglass_is_leader} gauge (of shard 0 when the nodes run several shards),
     * empty if {@code /metrics} does not answer or lacks it.
     */
    public static Optional<Boolean> leaderGauge(ServerProcess node) {
        return node.httpGet("/metrics").flatMap(body -> body.lines()
                .filter(line -> line.startsWith(LEADER_GAUGE + " ") || line.startsWith(LEADER_GAUGE + "{shard=\"0\"}"))
                .findFirst()
                .map(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).strip()) == 1.0));
    }

    /** Kills every node and deletes its data; the first failure is rethrown after all were tried. */
    @Override
    public void close() {
        RuntimeException first = null;
        for (ServerProcess node : nodes) {
            try {
                node.close();
            } catch (RuntimeException | AssertionError e) {
                if (first == null) {
                    first = new IllegalStateException("could not close every node", e);
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
