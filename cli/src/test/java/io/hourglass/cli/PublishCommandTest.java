package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hourglass.api.v1.PublishMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PublishCommandTest {
    private final ObjectMapper json = new ObjectMapper();
    private FakeBroker broker;

    @BeforeEach
    void start() throws Exception {
        broker = new FakeBroker();
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    @Test
    void printsOneJsonRecordPerMessage() throws Exception {
        Cli.Result r = Cli.run(broker, "--output", "json", "publish", "orders", "hello",
                "--delay", "1m30s", "--ttl", "1h", "--header", "a=1", "--header", "b=x=y");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals("", r.err());
        assertEquals(1, r.outLines().size());
        JsonNode record = json.readTree(r.outLines().get(0));
        assertEquals(List.of("id", "topic", "payload", "dueAt"), fieldNames(record));
        assertEquals(48, record.get("id").asText().length());
        assertEquals("orders", record.get("topic").asText());
        assertEquals("hello", record.get("payload").asText());
        assertTrue(record.get("dueAt").isIntegralNumber());
        assertEquals(FakeBroker.NOW + 90_000, record.get("dueAt").asLong());

        PublishMessage sent = broker.publishedMessages().get(0);
        assertEquals(90_000, sent.getDelayMs());
        assertEquals(3_600_000, sent.getTtlMs());
        assertEquals("1", sent.getHeadersOrThrow("a"));
        assertEquals("x=y", sent.getHeadersOrThrow("b"));
    }

    @Test
    void countNumbersThePayloadsAndReportsThroughput() throws Exception {
        Cli.Result r = Cli.run(broker, "publish", "t", "job", "--count", "3", "--output", "json");

        assertEquals(0, r.exitCode(), r.err());
        List<String> payloads = new ArrayList<>();
        for (String line : r.outLines()) {
            payloads.add(json.readTree(line).get("payload").asText());
        }
        assertEquals(List.of("job-0", "job-1", "job-2"), payloads);
        assertEquals(1, r.errLines().size());
        assertTrue(r.err().matches("published 3 messages in [0-9.]+ s \\([0-9]+ msg/s\\)\n"), r.err());
    }

    @Test
    void countWithoutPayloadUsesMsg() throws Exception {
        Cli.Result r = Cli.run(broker, "--output", "json", "publish", "t", "--count", "2");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals("msg-1", json.readTree(r.outLines().get(1)).get("payload").asText());
    }

    @Test
    void manyMessagesGoInBatches() {
        Cli.Result r = Cli.run(broker, "publish", "t", "--count", "5000", "--quiet");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals("", r.out());
        assertEquals(5000, broker.publishedMessages().size());
        // Batched: far fewer requests than messages. The in-process broker answers so fast that the
        // pipeline now and then empties and the next message goes out alone (nothing to share a
        // request with, see PublishConfig), so the bound leaves room for those.
        assertTrue(broker.publishRequests.size() <= 500, "requests: " + broker.publishRequests.size());
        // Several requests are in flight at once, so they may arrive in any order; each is in order.
        assertEquals(java.util.stream.IntStream.range(0, 5000).mapToObj(i -> "msg-" + i).collect(java.util.stream.Collectors.toSet()),
                broker.publishedMessages().stream().map(m -> m.getPayload().toStringUtf8())
                        .collect(java.util.stream.Collectors.toSet()));
    }

    @Test
    void withoutPayloadReadsStandardInput() throws Exception {
        Cli.Result r = Cli.runWith(Cli.IN_PROCESS, "from\nstdin",
                "--servers", broker.address(), "--output", "json", "publish", "t");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals("from\nstdin", broker.publishedMessages().get(0).getPayload().toStringUtf8());
        assertEquals("from\nstdin", json.readTree(r.outLines().get(0)).get("payload").asText());
    }

    @Test
    void tablePrintsAHeaderAndAlignedRows() {
        Cli.Result r = Cli.run(broker, "publish", "orders", "hello", "--count", "2");

        assertEquals(0, r.exitCode(), r.err());
        List<String> lines = r.outLines();
        assertEquals(3, lines.size());
        assertTrue(lines.get(0).matches("ID +TOPIC +DUE_AT +PAYLOAD"), lines.get(0));
        assertTrue(lines.get(1).matches("[0-9a-f]{48}  orders  2023-11-14T22:13:20\\.000Z  hello-0"), lines.get(1));
        assertEquals(lines.get(0).indexOf("PAYLOAD"), lines.get(2).indexOf("hello-1"));
    }

    @Test
    void aBadDurationIsAUsageError() {
        Cli.Result r = Cli.run(broker, "publish", "t", "x", "--delay", "5x");

        assertEquals(ExitCodes.USAGE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().contains("'5x' is not a duration"), r.err());
        assertEquals("", r.out());
        assertTrue(broker.publishRequests.isEmpty());
    }

    @Test
    void usageErrorsExitWith2() {
        assertEquals(ExitCodes.USAGE, Cli.run(broker, "publish", "t", "x", "--count", "0").exitCode());
        assertEquals(ExitCodes.USAGE, Cli.run(broker, "publish", "t", "x", "--bogus").exitCode());
        assertEquals(ExitCodes.USAGE, Cli.run(broker, "publish", "t", "x", "--header", "novalue").exitCode());
        Cli.Result blank = Cli.run(broker, "publish", " ", "x");
        assertEquals(ExitCodes.USAGE, blank.exitCode(), "a blank topic is refused before anything is sent: " + blank.err());
        assertEquals(1, blank.errLines().size(), blank.err());
        assertEquals(ExitCodes.USAGE, Cli.run(broker, "publish").exitCode());
        assertEquals(ExitCodes.USAGE, Cli.run(broker, "--output", "xml", "publish", "t", "x").exitCode());
        assertEquals(ExitCodes.USAGE, Cli.runWith(Cli.IN_PROCESS, "", "--servers", "nohost", "publish", "t", "x").exitCode());
        Cli.Result bare = Cli.run(broker);
        assertEquals(ExitCodes.USAGE, bare.exitCode());
        assertEquals(1, bare.errLines().size(), bare.err());
    }

    @Test
    void anInvalidRequestExitsWith3AndOneLine() {
        Cli.Result r = Cli.run(broker, "publish", "bad", "x");

        assertEquals(ExitCodes.INVALID_REQUEST, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().startsWith("hourglass: ") && r.err().contains("topic 'bad' is not allowed"), r.err());
        assertEquals(1, broker.publishRequests.size());
    }

    @Test
    void verboseAddsTheStackTrace() {
        Cli.Result r = Cli.run(broker, "--verbose", "publish", "bad", "x");

        assertEquals(ExitCodes.INVALID_REQUEST, r.exitCode());
        assertTrue(r.errLines().size() > 1);
        assertTrue(r.err().contains("InvalidRequestException"));
    }

    @Test
    void anUnknownInProcessServerExitsWith4WithinTheDeadline() {
        long start = System.nanoTime();
        Cli.Result r = Cli.runWith(Cli.IN_PROCESS, "", "--servers", "nobody:1", "--deadline", "500ms",
                "publish", "t", "x");

        assertEquals(ExitCodes.UNAVAILABLE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
    }

    @Test
    void anUnreachableTcpServerExitsWith4() {
        Cli.Result r = Cli.runWith(ClientFactory.grpc(), "", "--servers", "127.0.0.1:1",
                "publish", "t", "x", "--deadline", "1s");

        assertEquals(ExitCodes.UNAVAILABLE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().contains("127.0.0.1:1"), r.err());
    }

    @Test
    void helpListsTheExitCodes() {
        Cli.Result r = Cli.run(broker, "--help");

        assertEquals(0, r.exitCode());
        for (int code : new int[] {ExitCodes.OK, ExitCodes.FAILURE, ExitCodes.USAGE,
                ExitCodes.INVALID_REQUEST, ExitCodes.UNAVAILABLE}) {
            assertTrue(r.out().contains("  " + code + "   "), "code " + code + " in:\n" + r.out());
        }
        assertTrue(r.out().contains("publish") && r.out().contains("consume"));
    }

    @Test
    void countKeepsSeveralBatchesInFlightAndPrintsInOrder() throws Exception {
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        broker.publishGate = gate;
        var run = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> Cli.run(broker, "--output", "json", "publish", "t", "m", "--count", "5000"));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
                .until(() -> broker.publishesInFlight.get() >= PublishCommand.IN_FLIGHT);
        gate.countDown();
        Cli.Result r = run.get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(5000, r.outLines().size());
        for (int i = 0; i < 5000; i += 997) {
            assertTrue(r.outLines().get(i).contains("\"payload\":\"m-" + i + "\""), r.outLines().get(i));
        }
        assertEquals(PublishCommand.IN_FLIGHT, broker.maxPublishesInFlight.get());
    }

    @Test
    void inOrderSendsOneBatchAtATime() throws Exception {
        java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        broker.publishGate = gate;
        var run = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> Cli.run(broker, "publish", "t", "m", "--count", "2000", "-q", "--in-order"));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
                .until(() -> broker.publishesInFlight.get() == 1);
        org.awaitility.Awaitility.await().during(java.time.Duration.ofMillis(300))
                .atMost(java.time.Duration.ofSeconds(5)).until(() -> broker.maxPublishesInFlight.get() == 1);
        gate.countDown();
        Cli.Result r = run.get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(1, broker.maxPublishesInFlight.get());
    }
}
