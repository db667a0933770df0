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
}
