package io.hourglass.server.testing;

import static org.awaitility.Awaitility.await;

import io.hourglass.core.config.Settings;
import io.hourglass.raft.RaftNode;
import io.hourglass.server.HourglassNode;
import io.hourglass.server.config.NodeConfig;
import io.hourglass.testing.TestPorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.RaftServer;

/**
 * A real node for tests: real Ratis over loopback sockets, real RocksDB in a test directory, real
 * gRPC. Ports are chosen free once and kept across {@link #restart()}, so clients reconnect to the
 * same address. Always close it (try-with-resources or {@code @AfterEach}).
 */
public final class TestNode implements AutoCloseable {
    /** Who this harness is to Ratis' admin API; call ids must be unique per client id. */
    private final ClientId adminClient = ClientId.randomId();
    private final AtomicLong adminCalls = new AtomicLong();
    private final Path dataDir;
    private final Map<String, String> settings;
    private volatile HourglassNode node;

    private TestNode(Path dataDir, Map<String, String> overrides) {
        this.dataDir = dataDir;
        this.settings = new HashMap<>();
        settings.put("node.id", "n1");
        settings.put("node.dataDir", dataDir.toString());
        settings.put("node.bindHost", "127.0.0.1");
        putPorts(settings);
        // Off: the suites start hundreds of nodes, and the warm-up is a few CPU-seconds each. RaftWarmUpTest
        // covers it, and the distribution (chaos runs, the peer harness) runs it as shipped.
        settings.put("raft.warmUp", "false");
        settings.putAll(overrides);
    }

    /** Three consecutive free ports, laid out as the shipped defaults are: gRPC, Raft, HTTP. */
    static void putPorts(Map<String, String> s) {
        int base = TestPorts.block(3);
        s.put("grpc.port", Integer.toString(base));
        s.put("raft.port", Integer.toString(base + 1));
        s.put("http.port", Integer.toString(base + 2));
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
        await("node " + settings.get("node.id") + " leads").atMost(Duration.ofSeconds(30))
                .until(() -> node.isLeader() && node.metadata().isLeader());
    }

    public boolean isRunning() {
        return node != null;
    }

    /** Running and leading; safe while another thread stops the node. */
    public boolean leads() {
        HourglassNode n = node;
        return n != null && n.isLeader();
    }

    /** Running and leading the metadata group (shard 0's replica in a cluster without one). */
    public boolean leadsMetadata() {
        HourglassNode n = node;
        return n != null && n.metadata() != null && n.metadata().isLeader();
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

    /**
     * Asks this node, which must lead, to hand leadership to {@code target} with Ratis' own
     * transfer (what {@code hourglass cluster transfer-leader} does); returns once Ratis reports
     * the transfer done.
     *
     * @throws IllegalStateException if Ratis refused or the transfer did not finish in {@code timeout}
     */
    public void transferLeadershipTo(TestNode target, Duration timeout) {
        RaftServer server = node.raft().server();
        admin("transfer leadership to " + target.id(), () -> server.transferLeadership(new TransferLeadershipRequest(
                adminClient, server.getId(), RaftNode.GROUP_ID, adminCalls.incrementAndGet(),
                RaftPeerId.valueOf(target.id()), timeout.toMillis())));
    }

    /** Makes this node's state machine take a snapshot now (Ratis' snapshot management); returns its index. */
    public long takeSnapshot(Duration timeout) {
        RaftServer server = node.raft().server();
        return admin("snapshot", () -> server.snapshotManagement(SnapshotManagementRequest.newCreate(adminClient,
                server.getId(), RaftNode.GROUP_ID, adminCalls.incrementAndGet(), timeout.toMillis()))).getLogIndex();
    }

    /** The first index this node's Raft log still holds: above 0 once a purge removed the start. */
    public long raftLogStartIndex() {
        try {
            return node.raft().server().getDivision(RaftNode.GROUP_ID).getRaftLog().getStartIndex();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private interface AdminCall {
        RaftClientReply call() throws IOException;
    }

    private RaftClientReply admin(String what, AdminCall call) {
        try {
            RaftClientReply reply = call.call();
            if (!reply.isSuccess()) {
                throw new IllegalStateException(id() + ": " + what + " failed: " + reply.getException());
            }
            return reply;
        } catch (IOException e) {
            throw new IllegalStateException(id() + ": " + what + " failed: " + e, e);
        }
    }

    /** Where Ratis keeps this node's log and metadata: {@code <dataDir>/ratis}. */
    public Path ratisDir() {
        return dataDir.resolve("ratis");
    }

    /**
     * The bytes of every file under {@link #ratisDir()} (apparent sizes, so preallocated log
     * segments count in full). A file that vanishes while we walk (a purge) counts as zero; a walk
     * that a purge breaks is started again, a few times at most.
     */
    public long ratisDirBytes() {
        UncheckedIOException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            try (Stream<Path> files = Files.walk(ratisDir())) {
                return files.mapToLong(TestNode::sizeOrZero).sum();
            } catch (NoSuchFileException e) {
                return 0;
            } catch (IOException e) {
                last = new UncheckedIOException(e);
            } catch (UncheckedIOException e) {
                last = e;
            }
        }
        throw last;
    }

    private static long sizeOrZero(Path p) {
        try {
            return Files.isRegularFile(p) ? Files.size(p) : 0;
        } catch (IOException e) {
            return 0; // purged between listing and stat
        }
    }

    /** One line for failure reports: role, applied position, delivery state, snapshots, log size. */
    public String describe() {
        HourglassNode n = node;
        if (n == null) {
            return id() + ": stopped (data " + dataDir + ")";
        }
        try {
            return id() + ": " + (n.isLeader() ? "LEADER" : "follower") + ", applied " + n.store().appliedIndex()
                    + ", registry " + n.store().topicRegistry() + ", in flight " + n.engine().inFlightCount()
                    + ", consumers " + n.engine().hub().size() + ", queued deletions " + n.engine().queuedDeletions()
                    + ", snapshots taken " + n.raft().stateMachine().snapshotsTaken() + ", installed "
                    + n.raft().stateMachine().snapshotsInstalled() + ", ratis dir " + ratisDirBytes()
                    + " bytes, target " + target();
        } catch (RuntimeException e) {
            return id() + ": running, state unreadable (" + e + ")";
        }
    }

    /** A port for a test server: see {@link TestPorts}. */
    public static int freePort() {
        return TestPorts.next();
    }


    @Override
    public void close() {
        if (node != null) {
            node.close();
            node = null;
        }
    }
}
