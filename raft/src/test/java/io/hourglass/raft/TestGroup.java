package io.hourglass.raft;

import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.Settings;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventStore;
import io.hourglass.testing.TestPorts;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * A real Ratis group of {@code ids} on loopback ports, each node with its own RocksDB store under
 * {@code dir}: open, close and reopen nodes one by one. Closing the group closes every open node.
 */
final class TestGroup implements AutoCloseable {
    private final Path dir;
    private final Map<String, Integer> ports = new LinkedHashMap<>();
    private final String peers;
    private final Map<String, RaftNode> nodes = new LinkedHashMap<>();
    private final Map<String, EventStore> stores = new HashMap<>();
    private final Map<String, String> settings;
    private final Map<String, Clock> clocks = new HashMap<>();

    TestGroup(Path dir, List<String> ids) {
        this(dir, ids, Map.of());
    }

    /** @param settings more configuration of every node (raft.* keys) */
    TestGroup(Path dir, List<String> ids, Map<String, String> settings) {
        this.dir = dir;
        this.settings = Map.copyOf(settings);
        ids.forEach(id -> ports.put(id, TestPorts.next()));
        peers = ports.entrySet().stream()
                .map(e -> e.getKey() + "=127.0.0.1:" + e.getValue() + ":7070").collect(Collectors.joining(","));
    }

    /** Node {@code id}'s wall clock from its next {@link #open} on (the system clock otherwise). */
    TestGroup clock(String id, Clock clock) {
        clocks.put(id, clock);
        return this;
    }

    /** Opens every node, lets {@code beforeStart} register listeners, then starts them all. */
    TestGroup start(Consumer<RaftNode> beforeStart) throws IOException {
        for (String id : ports.keySet()) {
            beforeStart.accept(open(id));
        }
        for (RaftNode node : nodes.values()) {
            node.start();
        }
        return this;
    }

    /** Opens node {@code id} on its data directory (kept from an earlier run) without starting it. */
    RaftNode open(String id) throws IOException {
        Path home = dir.resolve(id);
        EventStore store = EventStore.open(home.resolve("db"));
        stores.put(id, store);
        Map<String, String> all = new HashMap<>(settings);
        all.putAll(Map.of("node.id", id, "cluster.peers", peers, "raft.port", Integer.toString(ports.get(id))));
        RaftConfig config = RaftConfig.from(new Settings(all), home, 7070);
        RaftNode node = new RaftNode(config, "127.0.0.1", 7070, new StateApplier(store),
                clocks.getOrDefault(id, Clock.systemUTC()), 1 << 20,
                ProposalObserver.NONE);
        nodes.put(id, node);
        return node;
    }

    /** Opens (without starting) node {@code id} started with {@code --join}: on a port of its own, with no group. */
    RaftNode openJoiner(String id) throws IOException {
        int port = TestPorts.next();
        ports.put(id, port);
        Path home = dir.resolve(id);
        EventStore store = EventStore.open(home.resolve("db"));
        stores.put(id, store);
        RaftConfig config = RaftConfig.from(new Settings(Map.of("node.id", id, "cluster.join", "true",
                "raft.port", Integer.toString(port))), home, 7070);
        RaftNode node = new RaftNode(config, "127.0.0.1", 7070, new StateApplier(store), Clock.systemUTC(), 1 << 20,
                ProposalObserver.NONE);
        nodes.put(id, node);
        return node;
    }

    /** Closes node {@code id} and its store; its data stays on disk. */
    void close(String id) throws IOException {
        RaftNode node = nodes.remove(id);
        if (node != null) {
            node.close();
        }
        EventStore store = stores.remove(id);
        if (store != null) {
            store.close();
        }
    }

    int port(String id) {
        return ports.get(id);
    }

    RaftNode node(String id) {
        return nodes.get(id);
    }

    EventStore store(String id) {
        return stores.get(id);
    }

    /** Node {@code id}'s Raft port. */
    int raftPort(String id) {
        return ports.get(id);
    }

    Map<String, RaftNode> nodes() {
        return nodes;
    }

    /**
     * Waits for exactly one leader that is also ready to stamp entries: a node that has just started
     * refuses to until it has read the other voters' clocks ({@link ClockWatch}), which on a busy
     * machine can come after its election.
     */
    RaftNode awaitOneLeader() {
        await().atMost(Duration.ofSeconds(60)).until(() -> nodes.values().stream()
                .filter(n -> n.isLeader() && n.stampRefusal() == null).count() == 1
                && nodes.values().stream().filter(RaftNode::isLeader).count() == 1);
        return nodes.values().stream().filter(RaftNode::isLeader).findFirst().orElseThrow();
    }

    /** Deletes closed node {@code id}'s data directory, as an operator wiping a node would. */
    void wipe(String id) throws IOException {
        if (nodes.containsKey(id)) {
            throw new IllegalStateException(id + " is open");
        }
        try (java.util.stream.Stream<Path> paths = java.nio.file.Files.walk(dir.resolve(id))) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.delete(p);
            }
        }
    }

    /**
     * Proposes {@code payload} through {@code leader}, then waits until node {@code id} applied it and
     * holds what the leader holds (equal state digests).
     */
    void awaitFollowsAgain(String id, RaftNode leader, String payload) {
        put(leader, payload).join();
        long last = leader.status().commitIndex();
        await(id + " follows the log again").atMost(Duration.ofSeconds(30))
                .until(() -> nodes.get(id).status().appliedIndex() >= last);
        await("and holds what the leader holds").atMost(Duration.ofSeconds(30)).until(() ->
                store(id).digest().equals(store(leader.nodeId()).digest()));
    }

    /** The first index in {@code node}'s Raft log (after purges). */
    static long logStart(RaftNode node) {
        try {
            return node.server().getDivision(RaftNode.GROUP_ID).getRaftLog().getStartIndex();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Proposes one message on topic {@code t} through {@code via}. */
    static CompletableFuture<?> put(RaftNode via, String payload) {
        return via.propose(Command.newBuilder().setPut(PutCmd.newBuilder().addMessages(NewMessage.newBuilder()
                .setTopic("t").setPayload(ByteString.copyFromUtf8(payload)))).build());
    }

    @Override
    public void close() throws IOException {
        for (String id : List.copyOf(nodes.keySet())) {
            close(id);
        }
    }
}
