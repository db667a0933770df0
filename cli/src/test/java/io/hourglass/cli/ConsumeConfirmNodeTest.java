package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code consume --confirm} drains a real backlog on one node and on three: every confirmation
 * arrives although the handler waits for them (before the client fix the first one sat behind
 * the buffered deliveries until --deadline, exit 4), and afterwards the topic is empty.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ConsumeConfirmNodeTest {
    private static final int BACKLOG = 2_000;
    private final ObjectMapper json = new ObjectMapper();

    @Test
    void consumesTwoThousandPendingMessagesWithConfirmOnOneNode(@TempDir Path dir) throws Exception {
        try (TestNode node = TestNode.start(dir)) {
            drainWithConfirm(node.target());
        }
    }

    @Test
    void consumesTwoThousandPendingMessagesWithConfirmOnThreeNodes(@TempDir Path dir) throws Exception {
        try (TestCluster cluster = TestCluster.start(dir, 3, Map.of())) {
            drainWithConfirm(cluster.targets());
        }
    }

    private void drainWithConfirm(String servers) throws Exception {
        try (HourglassClient client = HourglassClient.builder().servers(List.of(servers.split(","))).build()) {
            List<Message> batch = new ArrayList<>();
            for (int i = 0; i < BACKLOG; i++) {
                batch.add(Message.builder("orders").payload(("p-" + i).getBytes(StandardCharsets.UTF_8)).build());
            }
            client.publishBatch(batch);
        }
        long started = System.nanoTime();
        Cli.Result r = Cli.runWith(ClientFactory.grpc(), "", "--servers", servers, "--deadline", "30s",
                "--output", "json", "consume", "orders", "--group", "billing", "--count",
                Integer.toString(BACKLOG), "--confirm");
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertEquals(0, r.exitCode(), r.err());
        assertEquals("", r.err());
        Set<String> payloads = new HashSet<>();
        for (String line : r.outLines()) {
            JsonNode record = json.readTree(line);
            payloads.add(record.get("payload").asText());
        }
        assertEquals(BACKLOG, payloads.size(), "distinct payloads");
        System.out.printf("consume --confirm of %d messages on %s: %d ms%n", BACKLOG, servers, ms);

        Cli.Result stats = Cli.runWith(ClientFactory.grpc(), "", "--servers", servers, "--output", "json",
                "topic", "stats", "orders");
        assertEquals(0, stats.exitCode(), stats.err());
        JsonNode info = json.readTree(stats.outLines().get(0));
        assertEquals(0, info.get("pendingPerGroup").get("billing").asLong(), stats.out());
        assertTrue(r.outLines().size() == BACKLOG, "one record per delivery");
    }

    /**
     * {@code consume --count 10} on a backlog hands out no more than ten beyond those it consumed
     * (its prefetch limit), so the next consumer of the group finds the rest untouched: first
     * attempts. Without it, gRPC's window (~1 500 of these) went out, unseen, and came back as
     * second attempts.
     */
    @Test
    void aConsumeThatStopsAfterTenLeavesTheRestFirstAttempts(@TempDir Path dir) throws Exception {
        int backlog = 3_000;
        try (TestNode node = TestNode.start(dir)) {
            String servers = node.target();
            try (HourglassClient client = HourglassClient.builder().servers(List.of(servers)).build()) {
                List<Message> batch = new ArrayList<>();
                for (int i = 0; i < backlog; i++) {
                    batch.add(Message.builder("jobs").payload(("j-" + i + "-" + "x".repeat(600)).getBytes(StandardCharsets.UTF_8)).build());
                }
                client.publishBatch(batch);
            }
            Cli.Result few = Cli.runWith(ClientFactory.grpc(), "", "--servers", servers, "--output", "json",
                    "consume", "jobs", "--group", "workers", "--count", "10");
            assertEquals(0, few.exitCode(), few.err());
            assertEquals(10, few.outLines().size());
            Cli.Result rest = Cli.runWith(ClientFactory.grpc(), "", "--servers", servers, "--deadline", "30s",
                    "--output", "json", "consume", "jobs", "--group", "workers", "--count", Integer.toString(backlog - 10));
            assertEquals(0, rest.exitCode(), rest.err());
            int again = 0;
            for (String line : rest.outLines()) {
                if (json.readTree(line).get("attempt").asInt() > 1) {
                    again++;
                }
            }
            assertTrue(again <= 10, again + " of the rest came as second attempts; at most the 10 handed out unseen may");
        }
    }
}

