package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A follower that stops catching up is visible, not silent: with {@code SIGSTOP} on a follower
 * while the others keep committing, the leader logs a WARN naming it, exports
 * {@code hourglass_raft_follower_stalled{follower=…} 1}, and {@code cluster status} marks it
 * {@code stalled}; once it runs again and catches up, all three clear.
 *
 * <p>A paused process stands for every way a follower falls behind for good (a dead log appender
 * on the leader, a partition, a checkpoint install that keeps failing): the leader judges only
 * what it sees, a match index that does not move while the commit index does.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
final class StalledFollowerTest {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration STALL = Duration.ofSeconds(3);

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();

    private ProcessCluster cluster;
    private HourglassClient client;
    private ServerProcess paused;

    @AfterEach
    void stop() throws Exception {
        try {
            if (paused != null) {
                signal("CONT", paused.pid());
            }
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
    void theLeaderReportsAFollowerThatStoppedCatchingUp() throws Exception {
        Distribution distribution = Distribution.locate();
        Path runDir = distribution.newRunDir(getClass().getSimpleName());
        cluster = ProcessCluster.create(distribution, runDir, 3,
                Map.of("HOURGLASS_RAFT_FOLLOWERSTALLTIMEOUT", STALL.toSeconds() + "s"));
        serverLogs.watch(cluster.nodes());
        cluster.startAll(READY_TIMEOUT);
        ServerProcess leader = cluster.awaitLeader(Duration.ofSeconds(60));
        // The load goes to the leader only: a client whose first server is the paused follower would
        // wait there, nothing would commit, and a follower that is not behind is not stalled.
        client = HourglassClient.builder().servers(leader.ports().grpcAddress()).build();
        ServerProcess follower = cluster.nodes().stream().filter(n -> n != leader).findFirst().orElseThrow();
        String stalledGauge = "hourglass_raft_follower_stalled{follower=\"" + follower.nodeId() + "\"}";

        AtomicBoolean publishing = new AtomicBoolean(true);
        Thread load = new Thread(() -> {
            int i = 0;
            while (publishing.get()) {
                try {
                    client.publish(Message.builder("stall").payload("m-" + i++).build());
                } catch (RuntimeException e) {
                    // the leader is busy or changing: keep trying; this is only load
                }
            }
        }, "stall-load");
        load.start();
        try {
            long committedBefore = metric(leader, "hourglass_raft_commit_index");
            await("the load commits").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                    .until(() -> metric(leader, "hourglass_raft_commit_index") > committedBefore + 20);
            assertEquals(0, metric(leader, stalledGauge), "a healthy follower reported stalled");
            signal("STOP", follower.pid());
            paused = follower;

            await("the leader reports " + follower.nodeId() + " stalled").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200)).until(() -> metric(leader, stalledGauge) == 1);
            assertTrue(logOf(leader).contains("follower " + follower.nodeId() + " is not catching up"),
                    "no WARN in the leader's log");
            JsonNode member = clusterStatus(distribution, runDir, leader, follower.nodeId());
            assertTrue(member.path("stalled").asBoolean(false), () -> "cluster status does not say stalled: " + member);

            signal("CONT", follower.pid());
            paused = null;
            await("the leader sees " + follower.nodeId() + " catching up again").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200)).until(() -> metric(leader, stalledGauge) == 0);
            assertTrue(logOf(leader).contains("follower " + follower.nodeId() + " is catching up again"),
                    "no INFO when the stall ended");
        } finally {
            publishing.set(false);
            load.join(30_000);
        }
    }

    private static JsonNode clusterStatus(Distribution distribution, Path runDir, ServerProcess via, String id) {
        List<JsonNode> records = new Cli(distribution, runDir).run(Duration.ofSeconds(60),
                "--servers", via.ports().grpcAddress(), "--output", "json", "cluster", "status").assertSuccess().records();
        return records.stream().filter(r -> id.equals(r.path("id").asText())).findFirst()
                .orElseThrow(() -> new AssertionError("cluster status lists no " + id + ": " + records));
    }

    private static String logOf(ServerProcess node) {
        try {
            return Files.readString(node.dataDir().getParent().resolve("logs").resolve("hourglass-server.log"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void signal(String signal, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal + " " + pid + " failed");
    }

    private static long metric(ServerProcess node, String series) {
        return node.httpGet("/metrics").flatMap(body -> body.lines()
                        .filter(line -> line.startsWith(series + " "))
                        .findFirst()
                        .map(line -> (long) Double.parseDouble(line.substring(series.length() + 1).strip())))
                .orElse(-1L);
    }
}
