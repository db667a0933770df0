package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.HourglassClientException;
import io.hourglass.client.Message;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
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
 * One node whose disk syncs slowly: every fsync and fdatasync under its data directory takes 200 ms
 * longer, through an {@code LD_PRELOAD} shim ({@code src/test/c/slow_fsync.c}, built here with gcc;
 * this kernel has no device-mapper for a dm-delay target) whose delay a control file sets while the
 * node runs. Publishes are sent one at a time through a client of every node, for a few seconds each:
 * with every disk fast, while the slow node follows, and while it leads.
 *
 * <p>Skipped unless {@code -Dhourglass.measure=true}, like the other measurements. What it asserts: the cluster keeps committing and the slow follower keeps up. What it measures
 * (printed, and in {@code target/chaos-runs/measurements.txt}): the publish latencies — a slow
 * follower is off the commit path, a slow leader is on it, since Ratis commits an entry on the
 * leader only once the leader's own log has flushed it.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
final class SlowFsyncTest {
    private static final int DELAY_MS = 200;
    private static final Duration PHASE = Duration.ofSeconds(6);
    private static final Duration LEADER = Duration.ofSeconds(30);

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();
    private Distribution distribution;
    private ProcessCluster cluster;
    private HourglassClient client;
    /** The file the shim reads n3's fsync delay from. */
    private Path control;

    @BeforeEach
    void start() throws Exception {
        // A measurement more than a check (nothing reacts to a slow disk yet), ~40 s: with the others.
        Assumptions.assumeTrue(Measurements.enabled(), "a measurement; run with -D" + Measurements.ENABLED_PROPERTY + "=true");
        distribution = Distribution.locate();
        Path runDir = distribution.newRunDir(getClass().getSimpleName());
        Path shim = runDir.resolve("libslowfsync.so");
        Assumptions.assumeTrue(build(shim), "skipped: no gcc to build the LD_PRELOAD shim");
        Path slowData = runDir.resolve("n3").resolve("data");
        control = runDir.resolve("n3-fsync-delay-ms");
        Files.writeString(control, "0");
        cluster = ProcessCluster.create(distribution, runDir, 3, Map.of(), Map.of("n3", Map.of(
                "LD_PRELOAD", shim.toString(), "SLOW_FSYNC_CONTROL", control.toString(),
                "SLOW_FSYNC_PATH", slowData.toString())));
        serverLogs.watch(cluster.nodes());
        cluster.startAll(Duration.ofSeconds(90));
        client = HourglassClient.builder().servers(cluster.clientAddresses()).build();
    }

    private static boolean build(Path shim) throws IOException, InterruptedException {
        Path source = Path.of("src", "test", "c", "slow_fsync.c").toAbsolutePath();
        try {
            Process gcc = new ProcessBuilder("gcc", "-shared", "-fPIC", "-O2", "-o", shim.toString(), source.toString(),
                    "-ldl").redirectErrorStream(true).start();
            String out = new String(gcc.getInputStream().readAllBytes());
            if (!gcc.waitFor(60, TimeUnit.SECONDS) || gcc.exitValue() != 0) {
                throw new IllegalStateException("gcc failed: " + out);
            }
            return Files.exists(shim);
        } catch (IOException noGcc) {
            return false;
        }
    }

    @AfterEach
    void stop() {
        try {
            if (client != null) {
                client.close();
            }
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    @Test
    void aSlowFollowerIsOffTheCommitPathAndASlowLeaderIsOnIt() throws Exception {
        ServerProcess slow = cluster.nodes().get(2);
        ServerProcess fast = cluster.nodes().get(0);
        moveLeadership(fast);
        List<Long> baseline = publishFor(PHASE, "every disk fast");
        Files.writeString(control, Integer.toString(DELAY_MS));
        List<Long> slowFollower = publishFor(PHASE, "slow follower");
        ReplicaChecks.awaitCaughtUp(slow, fast, Duration.ofSeconds(30));

        moveLeadership(slow);
        List<Long> slowLeader = publishFor(PHASE, "slow leader");
        ReplicaChecks.awaitCaughtUp(fast, slow, Duration.ofSeconds(30));

        assertTrue(slowFollower.size() > 5 && slowLeader.size() > 5, "the cluster kept committing");
        Measurements.report(distribution, "SLOW_FSYNC delay=" + DELAY_MS + "ms allFast " + summary(baseline)
                + "; slowFollower " + summary(slowFollower) + "; slowLeader " + summary(slowLeader));
    }

    private void moveLeadership(ServerProcess to) {
        if (cluster.awaitLeader(LEADER) != to) {
            client.admin().transferLeader(to.nodeId());
        }
        await(to.nodeId() + " leads").atMost(LEADER).until(() -> cluster.awaitLeader(LEADER) == to);
    }

    /** Publishes one message at a time for {@code phase}; the latency of each, in ms. */
    private List<Long> publishFor(Duration phase, String label) {
        List<Long> ms = new ArrayList<>();
        long end = System.nanoTime() + phase.toNanos();
        int failed = 0;
        while (System.nanoTime() < end) {
            long t = System.nanoTime();
            try {
                client.publish(Message.of("slow-fsync", label + " " + ms.size()));
                ms.add((System.nanoTime() - t) / 1_000_000);
            } catch (HourglassClientException e) {
                failed++;
            }
        }
        assertTrue(failed == 0, failed + " publishes failed with " + label);
        return ms;
    }

    private static String summary(List<Long> ms) {
        List<Long> sorted = new ArrayList<>(ms);
        Collections.sort(sorted);
        return "n=" + sorted.size() + " p50=" + sorted.get(sorted.size() / 2) + "ms p99="
                + sorted.get(Math.min(sorted.size() - 1, sorted.size() * 99 / 100)) + "ms max=" + sorted.get(sorted.size() - 1) + "ms";
    }
}
