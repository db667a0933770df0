package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A leader killed with {@code kill -9}, while the new leader snapshots and purges its log behind
 * the dead node's position, must catch up once it restarts — every time, round after round.
 *
 * <p>The case that used to break: a new leader opens a log segment at the first entry of its term,
 * which is exactly the killed leader's next index. A snapshot then purges every older segment, so
 * the new leader's log begins at that node's next index and the entry before it exists nowhere
 * but in the state. Ratis 3.2.2's log appender could then find no "previous" entry for its first
 * append and died with a NullPointerException, leaving the restarted node behind for good while
 * the cluster ran on two nodes (and the next kill took it below quorum). Each round here builds
 * exactly that layout — it checks on disk that the new leader's log starts after the victim's
 * last applied entry — before it restarts the victim, and then requires the victim to apply
 * everything the leader committed.
 *
 * <p>Snapshots every 100 entries with a purge gap of 1, so that a few hundred publishes are enough
 * to purge; the segment size stays at its 8 MiB default, so the new term's segment is not closed
 * (and purged too) before the victim returns.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
final class RestartedLeaderCatchUpTest {
    private static final int ROUNDS = 3;
    /** Publishes (one log entry each) between the kill and the restart: enough for two snapshots. */
    private static final int ENTRIES_WHILE_DOWN = 260;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration LEADER_TIMEOUT = Duration.ofSeconds(60);
    /** Catching up 260 entries (or one checkpoint) takes a second or two; the bound is for a busy machine. */
    private static final Duration CATCH_UP_TIMEOUT = Duration.ofSeconds(60);
    private static final Pattern SEGMENT = Pattern.compile("log_(?:inprogress_)?(\\d+)(?:-\\d+)?");

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();

    private ProcessCluster cluster;
    private HourglassClient client;

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
    void aRestartedLeaderCatchesUpAfterTheNewLeaderPurgedItsLog() {
        Distribution distribution = Distribution.locate();
        cluster = ProcessCluster.create(distribution, distribution.newRunDir(getClass().getSimpleName()), 3, Map.of(
                "HOURGLASS_RAFT_SNAPSHOTEVERYENTRIES", "100",
                "HOURGLASS_RAFT_PURGEGAP", "1"));
        serverLogs.watch(cluster.nodes());
        cluster.startAll(READY_TIMEOUT);
        client = HourglassClient.builder().servers(cluster.clientAddresses()).build();

        for (int round = 1; round <= ROUNDS; round++) {
            publishOneByOne("warm-" + round, 120);
            awaitAllApplied(cluster.nodes());
            ServerProcess victim = cluster.awaitLeader(LEADER_TIMEOUT);
            long victimApplied = gauge(victim, "hourglass_raft_applied_index");
            victim.kill();

            ServerProcess leader = cluster.awaitLeader(LEADER_TIMEOUT);
            publishOneByOne("down-" + round, ENTRIES_WHILE_DOWN);
            long logStart = awaitLogPurgedPast(leader, victimApplied);

            victim.start();
            long target = gauge(leader, "hourglass_raft_commit_index");
            int r = round;
            try {
                await(victim.nodeId() + " applies up to " + target).atMost(CATCH_UP_TIMEOUT)
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> gaugeOrMinusOne(victim, "hourglass_raft_applied_index") >= target);
            } catch (ConditionTimeoutException e) {
                throw new AssertionError("round " + r + ": " + victim.nodeId() + " (applied " + victimApplied
                        + " when killed) never caught up with " + leader.nodeId() + " (log starts at " + logStart
                        + ", commit " + target + "); it is at " + gaugeOrMinusOne(victim, "hourglass_raft_applied_index"), e);
            }
            victim.awaitReady(READY_TIMEOUT);
            System.out.printf("round %d: %s killed at applied %d; %s's log started at %d; caught up to %d%n",
                    round, victim.nodeId(), victimApplied, leader.nodeId(), logStart, target);
        }
    }

    /** One publish per call, so that each is its own log entry. */
    private void publishOneByOne(String prefix, int count) {
        for (int i = 0; i < count; i++) {
            client.publish(Message.builder("catch-up").payload(prefix + "-" + i).build());
        }
    }

    /** Waits until every running node has applied the same, highest index. */
    private static void awaitAllApplied(List<ServerProcess> nodes) {
        await("every running node applied everything").atMost(LEADER_TIMEOUT).pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    long[] applied = nodes.stream().filter(ServerProcess::isAlive)
                            .mapToLong(n -> gaugeOrMinusOne(n, "hourglass_raft_applied_index")).toArray();
                    long commit = nodes.stream().filter(ServerProcess::isAlive)
                            .mapToLong(n -> gaugeOrMinusOne(n, "hourglass_raft_commit_index")).max().orElse(-1);
                    return applied.length == nodes.size() && commit > 0
                            && java.util.Arrays.stream(applied).allMatch(a -> a == commit);
                });
    }

    /**
     * Waits until the leader's first log segment starts after {@code index}: nothing up to it is
     * left in the leader's log. Returns that first index.
     */
    private static long awaitLogPurgedPast(ServerProcess leader, long index) {
        return await(leader.nodeId() + "'s log purged past " + index).atMost(LEADER_TIMEOUT)
                .pollInterval(Duration.ofMillis(200))
                .until(() -> firstLogIndex(leader.dataDir()), first -> first.isPresent() && first.getAsLong() > index)
                .getAsLong();
    }

    private static OptionalLong firstLogIndex(Path dataDir) {
        Path ratis = SegmentFiles.shardZeroGroupDir(dataDir); // not the metadata group's, whose log stays short
        if (!Files.isDirectory(ratis)) {
            return OptionalLong.empty();
        }
        try (Stream<Path> files = Files.walk(ratis, 2)) {
            return files.map(p -> SEGMENT.matcher(p.getFileName().toString()))
                    .filter(Matcher::matches)
                    .mapToLong(m -> Long.parseLong(m.group(1)))
                    .min();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long gauge(ServerProcess node, String name) {
        long value = gaugeOrMinusOne(node, name);
        assertTrue(value >= 0, () -> node.nodeId() + " exports no " + name);
        return value;
    }

    private static long gaugeOrMinusOne(ServerProcess node, String name) {
        return node.httpGet("/metrics").flatMap(body -> body.lines()
                        .filter(line -> line.startsWith(name + " ") || line.startsWith(name + "{"))
                        .findFirst()
                        .map(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1).strip())))
                .orElse(-1L);
    }
}
