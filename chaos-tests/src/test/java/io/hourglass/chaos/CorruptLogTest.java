package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A follower's Raft log damaged on disk while it was down, on real processes under a light publish
 * load: a byte flipped in a closed segment (damage: the node refuses to start, exit status 65, with one
 * line naming the file and the repair; the operator's repair — wipe the data directory, start again —
 * brings it back), and its open segment cut inside an entry (a torn write, as a crash leaves: the node
 * cuts the torn tail, starts, and catches up). Meanwhile the other two serve; afterwards every replica
 * holds the same state.
 *
 * <p>Segments of 64 KiB and 1 KiB messages, so that a few seconds of load close several segments.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
final class CorruptLogTest {
    private static final Duration READY = Duration.ofSeconds(90);
    private static final Duration LEADER = Duration.ofSeconds(30);
    private static final Duration CATCH_UP = Duration.ofSeconds(45);

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();
    private ProcessCluster cluster;
    private TrickleLoad load;

    @BeforeEach
    void start() {
        Distribution distribution = Distribution.locate();
        cluster = ProcessCluster.create(distribution, distribution.newRunDir(getClass().getSimpleName()), 3,
                Map.of("HOURGLASS_RAFT_LOGSEGMENTBYTES", "65536"));
        serverLogs.watch(cluster.nodes());
        cluster.startAll(READY);
        load = new TrickleLoad(cluster.clientAddresses(), "corrupt-log", 1000, Duration.ofMillis(20));
    }

    @AfterEach
    void stop() {
        try {
            if (load != null) {
                load.close();
            }
        } finally {
            cluster.close();
        }
    }

    @Test
    void aFlippedByteInAClosedSegmentKeepsTheNodeDownUntilItsDataIsWiped() throws Exception {
        ServerProcess leader = cluster.awaitLeader(LEADER);
        ServerProcess victim = aFollowerWithClosedSegments(leader, 3);
        victim.kill();
        List<Path> closed = SegmentFiles.of(victim.dataDir()).closed();
        Path damaged = closed.get(closed.size() - 1);
        SegmentFiles.flipByte(damaged, Files.size(damaged) / 2);

        long started = System.nanoTime();
        victim.start();
        int status = victim.awaitOwnExit(Duration.ofSeconds(60));
        Duration refused = Duration.ofNanos(System.nanoTime() - started);
        String output = ReplicaChecks.lastIncarnation(victim);
        assertEquals(65, status, "exit status of a node with a corrupt log\n" + output);
        List<String> verdict = output.lines().filter(l -> l.contains("the Raft log is corrupt")).toList();
        assertTrue(verdict.stream().anyMatch(l -> l.contains(damaged.getFileName().toString())
                && l.contains("delete") && l.contains(victim.dataDir().toString())), () -> "no line names the "
                + "damaged segment " + damaged.getFileName() + " and the repair:\n" + output);
        assertTrue(output.lines().noneMatch(l -> l.contains("raft server started")), "it never ran Raft:\n" + output);
        load.awaitCommits(50, Duration.ofSeconds(30)); // the other two serve meanwhile

        victim.wipeData();
        long wiped = System.nanoTime();
        victim.start();
        ReplicaChecks.awaitCaughtUp(victim, cluster.awaitLeader(LEADER), CATCH_UP);
        victim.awaitReady(READY);
        Duration recovered = Duration.ofNanos(System.nanoTime() - wiped);
        load.close();
        ReplicaChecks.assertSameState(cluster.nodes(), CATCH_UP);
        System.out.printf("flipped byte in %s of %s: refused in %d ms (exit %d); wiped, caught up and ready in %d ms; "
                        + "load %d committed, %d failed %s%n", damaged.getFileName(), victim.nodeId(), refused.toMillis(),
                status, recovered.toMillis(), load.committed(), load.failed(), load.firstErrors());
    }

    @Test
    void anOpenSegmentCutInsideAnEntryIsATornWriteTheNodeRepairs() throws Exception {
        ServerProcess leader = cluster.awaitLeader(LEADER);
        ServerProcess victim = aFollowerWithClosedSegments(leader, 1);
        Path open = killWithEntriesInItsOpenSegment(victim);
        List<SegmentFiles.Frame> frames = SegmentFiles.frames(open);
        SegmentFiles.Frame last = frames.get(frames.size() - 1);
        SegmentFiles.truncate(open, last.offset() + last.length() / 2);

        long started = System.nanoTime();
        victim.start();
        ReplicaChecks.awaitCaughtUp(victim, cluster.awaitLeader(LEADER), CATCH_UP);
        victim.awaitReady(READY);
        Duration recovered = Duration.ofNanos(System.nanoTime() - started);
        String output = ReplicaChecks.lastIncarnation(victim);
        assertTrue(Gauges.read(victim, "hourglass_raft_log_repairs") >= 1, "the repair is on /metrics");
        assertTrue(output.lines().anyMatch(l -> l.contains(" WARN ") && l.contains("torn")
                && l.contains(open.getFileName().toString())), () -> "no WARN about the torn tail:\n" + output);
        load.close();
        ReplicaChecks.assertSameState(cluster.nodes(), CATCH_UP);
        System.out.printf("%s cut inside its last entry (%d entries in it): restarted, caught up and ready in %d ms; "
                        + "load %d committed, %d failed %s%n", open.getFileName(), frames.size(), recovered.toMillis(),
                load.committed(), load.failed(), load.firstErrors());
    }

    /**
     * Kills {@code node} with at least one whole entry in its open segment, and returns that segment. The
     * log rolls to a new segment about every second under this load, so the kill can land just after a
     * roll, on an open segment with no entry yet; then the node is started again and killed once more.
     */
    private static Path killWithEntriesInItsOpenSegment(ServerProcess node) throws Exception {
        for (int attempt = 1; ; attempt++) {
            await(node.nodeId() + "'s open segment holds entries").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> SegmentFiles.of(node.dataDir()).open().map(SegmentFiles::frames)
                            .map(f -> f.size() >= 2).orElse(false));
            node.kill();
            Path open = SegmentFiles.of(node.dataDir()).open().orElse(null);
            if (open != null && !SegmentFiles.frames(open).isEmpty()) {
                return open;
            }
            if (attempt == 3) {
                throw new AssertionError(node.nodeId() + " was killed 3 times just after its log rolled over");
            }
            node.start();
            node.awaitReady(READY);
        }
    }

    /** A follower of {@code leader} once its log has at least {@code segments} closed segments. */
    private ServerProcess aFollowerWithClosedSegments(ServerProcess leader, int segments) {
        ServerProcess follower = cluster.nodes().stream().filter(n -> n != leader).findFirst().orElseThrow();
        await(follower.nodeId() + " has " + segments + " closed segments").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> SegmentFiles.of(follower.dataDir()).closed().size() >= segments);
        return follower;
    }
}
