package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code hourglass bench} against a real node: each mode prints one JSON record with the §7
 * fields and counts what it says it counts (every message published, drained or delivered; none
 * of the scheduled ones early).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchCommandTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    static Path dir;
    private static TestNode node;

    @BeforeAll
    static void start() {
        node = TestNode.start(dir);
    }

    @AfterAll
    static void stop() {
        node.close();
    }

    private static JsonNode bench(String... args) throws Exception {
        String[] all = new String[args.length + 3];
        all[0] = "--servers";
        all[1] = node.target();
        all[2] = "bench";
        System.arraycopy(args, 0, all, 3, args.length);
        Cli.Result r = Cli.runWith(ClientFactory.grpc(), "", all);
        assertEquals(0, r.exitCode(), r.err());
        List<String> lines = r.outLines();
        assertEquals(1, lines.size(), "one record: " + r.out());
        JsonNode record = JSON.readTree(lines.get(0));
        for (String field : List.of("metric", "messages", "seconds", "msgPerSec", "errors", "duplicates", "maxGapMs",
                "maxGapEndedAtMs")) {
            assertTrue(record.has(field), field + " in " + record);
        }
        assertEquals(0, record.get("errors").asLong(), record.toString());
        assertEquals(0, record.get("duplicates").asLong(), "one node, no failover: " + record);
        return record;
    }

    @Test
    void publishSendsEveryMessage() throws Exception {
        JsonNode r = bench("publish", "--count", "2000", "--window", "200", "--size", "256");
        assertEquals("publish", r.get("metric").asText());
        assertEquals(2000, r.get("messages").asLong());
        assertTrue(r.get("msgPerSec").asLong() > 0);
    }

    @Test
    void consumeDrainsTheWholeBacklog() throws Exception {
        JsonNode r = bench("consume", "--count", "1000");
        assertEquals(1000, r.get("messages").asLong());
    }

    @Test
    void e2eAndLatencyReportPercentilesOfEveryDelivery() throws Exception {
        JsonNode e2e = bench("e2e", "--duration", "2s", "--window", "100");
        assertTrue(e2e.get("messages").asLong() > 0, e2e.toString());
        JsonNode latency = bench("latency", "--duration", "2s", "--rate", "200");
        assertEquals(400, latency.get("messages").asLong(), latency.toString());
        for (String p : List.of("p50Ms", "p99Ms", "p999Ms", "maxMs")) {
            assertTrue(latency.get(p).asDouble() > 0, p + " in " + latency);
        }
        assertTrue(latency.get("p50Ms").asDouble() <= latency.get("p99Ms").asDouble());
        // The stages split the latency: each is at most the whole (one clock here), p50 at most p99.
        for (String stage : List.of("toLeader", "inBroker", "toHandler")) {
            long p50 = latency.get("stagesP50Ms").get(stage).asLong();
            long p99 = latency.get("stagesP99Ms").get(stage).asLong();
            assertTrue(p50 >= 0 && p50 <= p99 && p99 <= latency.get("maxMs").asDouble() + 1, stage + " in " + latency);
        }
    }

    @Test
    void scheduleDeliversNothingEarly() throws Exception {
        JsonNode r = bench("schedule", "--count", "500", "--duration", "2s");
        assertEquals(500, r.get("messages").asLong());
        assertEquals(0, r.get("early").asLong(), r.toString());
        assertTrue(r.has("p99Ms"));
    }
}
