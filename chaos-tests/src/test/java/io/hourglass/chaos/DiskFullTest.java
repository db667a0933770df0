package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One node's disk fills up (its data directory is a 64 MiB tmpfs, filled by a filler file) under a
 * light publish load, once while it follows and once while it leads. The node stops by itself — one
 * ERROR naming the data directory and that it is full, exit status 70 — while the other two serve on;
 * restarted by its supervisor (here the test) while the disk is still full it refuses to start at once,
 * with the same status and a line saying how much space it needs; once the filler is gone it starts,
 * catches up, and every replica holds the same state.
 *
 * <p>Runs only as root (it mounts a tmpfs), and says so when skipped. The nodes stop below 8 MiB free
 * ({@code node.minFreeDiskMb}), so that the tmpfs can be small.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
final class DiskFullTest {
    private static final Duration READY = Duration.ofSeconds(90);
    private static final Duration LEADER = Duration.ofSeconds(30);
    private static final Duration STOP = Duration.ofSeconds(60);

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();
    private ProcessCluster cluster;
    private ServerProcess victim;
    private Tmpfs disk;
    private TrickleLoad load;
    private TrickleLoad direct;
    private HourglassClient admin;

    @BeforeEach
    void start() {
        Assumptions.assumeTrue(Tmpfs.unavailable() == null, () -> "skipped: " + Tmpfs.unavailable());
        Distribution distribution = Distribution.locate();
        cluster = ProcessCluster.create(distribution, distribution.newRunDir(getClass().getSimpleName()), 3,
                Map.of("HOURGLASS_NODE_MINFREEDISKMB", "8"));
        serverLogs.watch(cluster.nodes());
        victim = cluster.nodes().get(2);
        disk = Tmpfs.mount(victim.dataDir(), 64);
        cluster.startAll(READY);
        admin = HourglassClient.builder().servers(cluster.clientAddresses()).build();
    }

    @AfterEach
    void stop() {
        try {
            for (AutoCloseable c : new AutoCloseable[] {load, direct, admin}) {
                if (c != null) {
                    c.close();
                }
            }
            if (victim != null) {
                victim.kill();
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        } finally {
            try {
                if (disk != null) {
                    disk.close();
                }
            } finally {
                if (cluster != null) {
                    cluster.close();
                }
            }
        }
    }

    @Test
    void aFollowerWhoseDiskFillsStopsAndComesBackOnceSpaceReturns() throws Exception {
        ServerProcess other = cluster.nodes().get(0);
        if (cluster.awaitLeader(LEADER) == victim) {
            admin.admin().transferLeader(other.nodeId());
        }
        await("a leader other than " + victim.nodeId()).atMost(LEADER).until(() -> cluster.awaitLeader(LEADER) != victim);
        fillAndRecover("follower");
    }

    @Test
    void aLeaderWhoseDiskFillsStopsAndComesBackOnceSpaceReturns() throws Exception {
        if (cluster.awaitLeader(LEADER) != victim) {
            admin.admin().transferLeader(victim.nodeId());
        }
        await(victim.nodeId() + " leads").atMost(LEADER).until(() -> cluster.awaitLeader(LEADER) == victim);
        fillAndRecover("leader");
    }

    private void fillAndRecover(String role) throws Exception {
        load = new TrickleLoad(cluster.clientAddresses(), "disk-full", 200, Duration.ofMillis(20));
        direct = new TrickleLoad(List.of(victim.ports().grpcAddress()), "disk-full-direct", 200, Duration.ofMillis(50),
                TrickleLoad.ONE_ATTEMPT);
        load.awaitCommits(20, Duration.ofSeconds(30));
        direct.awaitCommits(5, Duration.ofSeconds(30));

        long free = Gauges.read(victim, "hourglass_disk_free_bytes");
        assertTrue(free > 8 << 20 && free <= 64 << 20, "free bytes of the 64 MiB tmpfs on /metrics: " + free);
        assertEquals(8 << 20, Gauges.read(victim, "hourglass_disk_min_free_bytes"));
        load.resetGap();
        long filled = System.nanoTime();
        long filler = disk.fill();
        int status = victim.awaitOwnExit(STOP);
        Duration stopped = Duration.ofNanos(System.nanoTime() - filled);
        String output = ReplicaChecks.lastIncarnation(victim);
        assertEquals(70, status, "exit status of a node whose disk is full\n" + output);
        assertTrue(output.lines().anyMatch(l -> l.contains(" ERROR ") && l.contains("full")
                && l.contains(victim.dataDir().toString())), () -> "no ERROR naming the full data directory:\n" + output);
        load.awaitCommits(50, Duration.ofSeconds(30)); // the other two serve
        Duration gap = load.longestGap();
        assertTrue(direct.firstErrors().stream().anyMatch(m -> m.contains("node " + victim.nodeId() + " stopped: ")
                && m.contains("the disk is full")), () -> "a client of " + victim.nodeId() + " alone was not told why: "
                + direct.firstErrors());

        // What the node freed on its way out (each group's open log segment is cut to its end) is
        // filled again: the supervisor restarts it on a disk that is still full.
        disk.fill();
        victim.start();
        int refused = victim.awaitOwnExit(STOP);
        String refusal = ReplicaChecks.lastIncarnation(victim);
        assertEquals(70, refused, "exit status of a node started on a full disk\n" + refusal);
        assertTrue(refusal.lines().anyMatch(l -> l.contains("not starting") && l.contains("node.minFreeDiskMb")),
                () -> "no line says why it does not start:\n" + refusal);
        assertTrue(refusal.lines().noneMatch(l -> l.contains("raft server started")), refusal);

        disk.free();
        long freed = System.nanoTime();
        victim.start();
        ReplicaChecks.awaitCaughtUp(victim, cluster.awaitLeader(LEADER), Duration.ofSeconds(45));
        victim.awaitReady(READY);
        Duration recovered = Duration.ofNanos(System.nanoTime() - freed);
        load.close();
        direct.close();
        ReplicaChecks.assertSameState(cluster.nodes(), Duration.ofSeconds(45));
        System.out.printf("%s %s, disk filled (%d MiB filler): stopped with %d in %d ms; longest gap between commits "
                        + "of the all-server client %d ms (%d committed, %d failed); refused to start on the full "
                        + "disk; after the filler went: caught up and ready in %d ms%n", role, victim.nodeId(),
                filler >> 20, status, stopped.toMillis(), gap.toMillis(), load.committed(), load.failed(),
                recovered.toMillis());
        System.out.println("a client of " + victim.nodeId() + " alone was told first: " + direct.firstErrors().get(0));
        System.out.println("the all-server client's failures: " + load.firstErrors());
    }
}
