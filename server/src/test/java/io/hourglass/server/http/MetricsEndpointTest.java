package io.hourglass.server.http;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.Subscription;
import io.hourglass.server.testing.TestNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Scrapes a real node's /metrics and checks that the counters move when messages flow. */
@Timeout(120)
class MetricsEndpointTest {
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    @TempDir
    Path dir;

    private HttpResponse<String> get(TestNode node, String path) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + path))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private double value(TestNode node, String series) throws IOException, InterruptedException {
        String body = get(node, "/metrics").body();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " ([0-9.eE+-]+)$").matcher(body);
        return m.find() ? Double.parseDouble(m.group(1)) : -1;
    }

    @Test
    void countersMoveWhenMessagesFlowAndProbesAnswer() throws Exception {
        try (TestNode node = TestNode.start(dir);
             HourglassClient client = HourglassClient.builder().servers(node.target()).build()) {
            assertEquals(200, get(node, "/healthz").statusCode());
            assertEquals(200, get(node, "/readyz").statusCode());
            assertEquals(0.0, value(node, "hourglass_messages_dispatched_total"));
            String before = get(node, "/metrics").body();
            assertTrue(before.contains("jvm_memory_used_bytes"), "JVM metrics exported");
            assertTrue(before.contains("hourglass_raft_commit_index"), "Raft metrics exported");
            assertEquals(1.0, value(node, "hourglass_is_leader"));

            client.publishBatch(IntStream.range(0, 20).mapToObj(i -> Message.of("metered", "m" + i)).toList());
            AtomicInteger acked = new AtomicInteger();
            try (Subscription s = client.subscribe("metered", "g", (m, ctx) -> ctx.ackConfirmed().thenRun(acked::incrementAndGet))) {
                await().atMost(Duration.ofSeconds(30)).until(() -> acked.get() == 20);
            }
            assertEquals(20.0, value(node, "hourglass_messages_published_total{topic=\"metered\"}"));
            assertEquals(20.0, value(node, "hourglass_messages_dispatched_total"));
            assertEquals(20.0, value(node, "hourglass_consumer_ack_total"));
            assertEquals(20.0, value(node, "hourglass_delete_batch_size_sum"));
            assertTrue(value(node, "hourglass_delivery_lateness_seconds_count{topic=\"metered\"}") >= 20);
            assertTrue(value(node, "hourglass_raft_propose_latency_seconds_count") >= 2);
            assertTrue(value(node, "hourglass_raft_applied_index") > 0);
            assertEquals(1.0, value(node, "hourglass_publish_requests_total"), "one publish request");
            assertEquals(1.0, value(node, "hourglass_publish_entries_total"), "in one log entry");

            client.publishBatch(List.of(Message.builder("metered").payload("soon").delay(Duration.ofMinutes(10)).build(),
                    Message.builder("metered").payload("soon").delay(Duration.ofMinutes(20)).build(),
                    Message.builder("other").payload("later").delay(Duration.ofHours(2)).build()));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> { // counted at most every 5 s
                assertEquals(0.0, value(node, "hourglass_messages_due_within{window=\"1m\"}"));
                assertEquals(2.0, value(node, "hourglass_messages_due_within{window=\"1h\"}"));
                assertEquals(3.0, value(node, "hourglass_messages_due_within{window=\"1d\"}"));
            });
        }
    }
}
