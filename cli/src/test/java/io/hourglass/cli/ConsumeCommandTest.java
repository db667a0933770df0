package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hourglass.api.v1.Delivery;
import io.hourglass.api.v1.SubscribeRequest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConsumeCommandTest {
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

    /** One ACK per acknowledged tag: a frame with more tags (the client batches plain ACKs) counts each. */
    private List<SubscribeRequest> acks() {
        List<SubscribeRequest> acks = new ArrayList<>();
        for (SubscribeRequest frame : broker.subscribeRequests) {
            if (frame.hasAck()) {
                acks.add(frame);
                frame.getAck().getMoreTagsList().forEach(tag -> acks.add(SubscribeRequest.newBuilder()
                        .setAck(frame.getAck().toBuilder().clearMoreTags().setTag(tag)).build()));
            }
        }
        return acks;
    }

    @Test
    void printsOneJsonRecordPerDeliveryAndAcksIt() throws Exception {
        Delivery first = broker.queue("orders", "one", Map.of("k", "v"));
        broker.queue("orders", "two", Map.of());

        Cli.Result r = Cli.run(broker, "--output", "json", "consume", "orders", "--count", "2");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals("", r.err());
        assertEquals(2, r.outLines().size());
        JsonNode record = json.readTree(r.outLines().get(0));
        List<String> names = new ArrayList<>();
        record.fieldNames().forEachRemaining(names::add);
        assertEquals(List.of("tag", "topic", "payload", "headers", "enqueuedAt", "dueAt",
                "deliveredAt", "attempt"), names);
        assertEquals(HexFormat.of().formatHex(first.getTag().toByteArray()), record.get("tag").asText());
        assertEquals("orders", record.get("topic").asText());
        assertEquals("one", record.get("payload").asText());
        assertTrue(record.get("headers").isObject());
        assertEquals("v", record.get("headers").get("k").asText());
        assertEquals(FakeBroker.NOW, record.get("enqueuedAt").asLong());
        assertEquals(FakeBroker.NOW + 10, record.get("dueAt").asLong());
        assertEquals(FakeBroker.NOW + 20, record.get("deliveredAt").asLong());
        assertTrue(record.get("deliveredAt").isIntegralNumber());
        assertEquals(1, record.get("attempt").asInt());
        assertEquals("two", json.readTree(r.outLines().get(1)).get("payload").asText());

        assertEquals(2, acks().size());
        assertEquals(first.getTag(), acks().get(0).getAck().getTag());
        SubscribeRequest init = broker.subscribeRequests.get(0);
        assertEquals("orders", init.getInit().getTopic());
        assertEquals("", init.getInit().getGroup());
    }

    @Test
    void stopsAtCountAndLeavesTheRestUnacked() {
        broker.queue("t", "a", Map.of());
        broker.queue("t", "b", Map.of());
        broker.queue("t", "c", Map.of());

        Cli.Result r = Cli.run(broker, "--output", "json", "consume", "t", "--count", "1", "--group", "g");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals(1, r.outLines().size());
        assertEquals(1, acks().size());
        assertEquals("g", broker.subscribeRequests.get(0).getInit().getGroup());
    }

    @Test
    void confirmWaitsForTheConfirmedAck() {
        broker.queue("t", "a", Map.of());

        Cli.Result r = Cli.run(broker, "consume", "t", "--count", "1", "--confirm");

        assertEquals(0, r.exitCode(), r.err());
        assertTrue(acks().get(0).getAck().getConfirm());
    }

    @Test
    void nackAndNoAck() {
        broker.queue("t", "a", Map.of());

        assertEquals(0, Cli.run(broker, "consume", "t", "--count", "1", "--nack").exitCode());
        assertEquals(0, Cli.run(broker, "consume", "t", "--count", "1", "--no-ack").exitCode());

        assertEquals(1, broker.subscribeRequests.stream().filter(SubscribeRequest::hasNack).count());
        assertTrue(acks().isEmpty());
    }

    @Test
    void conflictingFlagsAreUsageErrors() {
        assertEquals(ExitCodes.USAGE, Cli.run(broker, "consume", "t", "--nack", "--no-ack").exitCode());
        Cli.Result r = Cli.run(broker, "consume", "t", "--nack", "--confirm");
        assertEquals(ExitCodes.USAGE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertEquals(ExitCodes.USAGE, Cli.run(broker, "consume", "t", "--timeout", "soon").exitCode());
        assertTrue(broker.subscribeRequests.isEmpty());
    }

    @Test
    void stopsAfterTheIdleTimeout() {
        broker.queue("t", "a", Map.of());
        long start = System.nanoTime();

        Cli.Result r = Cli.run(broker, "consume", "t", "--timeout", "300ms");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals(2, r.outLines().size(), r.out()); // header + one row
        assertTrue(r.outLines().get(0).startsWith("TAG"));
        assertTrue(r.outLines().get(1).contains("k=v") || r.outLines().get(1).contains("  -  "));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
    }

    @Test
    void aRefusedSubscriptionExitsWith3() {
        Cli.Result r = Cli.run(broker, "consume", "bad", "--timeout", "5s");

        assertEquals(ExitCodes.INVALID_REQUEST, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().contains("topic 'bad' is not allowed"), r.err());
    }

    @Test
    void noServerExitsWith4WithinTheDeadline() {
        long start = System.nanoTime();

        Cli.Result r = Cli.runWith(Cli.IN_PROCESS, "", "--servers", "nobody:1", "consume", "t",
                "--deadline", "500ms");

        assertEquals(ExitCodes.UNAVAILABLE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
    }
}
