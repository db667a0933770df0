package io.hourglass.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.Status;
import io.hourglass.api.v1.EjectReason;
import io.hourglass.api.v1.RoomDelivery;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionRequest.OpCase;
import io.hourglass.api.v1.SubscriptionMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoomJoinCommandTest {
    private final ObjectMapper json = new ObjectMapper();
    private FakeRooms rooms;

    @BeforeEach
    void start() throws Exception {
        rooms = new FakeRooms();
    }

    @AfterEach
    void stop() {
        rooms.close();
    }

    private Cli.Result run(String... args) {
        List<String> all = new ArrayList<>(List.of("--servers", rooms.address()));
        all.addAll(List.of(args));
        return Cli.runWith(Cli.IN_PROCESS, "", all.toArray(new String[0]));
    }

    private List<JsonNode> records(Cli.Result r) throws Exception {
        assertEquals(0, r.exitCode(), r.err());
        assertEquals("", r.err());
        List<JsonNode> records = new ArrayList<>();
        for (String line : r.outLines()) {
            records.add(json.readTree(line));
        }
        return records;
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private List<String> ackedIds() {
        return rooms.requests(OpCase.ACK).stream().map(q -> q.getAck().getMessageId()).toList();
    }

    @Test
    void printsJoinedThenOneRecordPerDeliveryAndAcksEach() throws Exception {
        RoomDelivery first = rooms.queue("r", "one", 5, false);
        rooms.queue("r", "urgent", 0, true);
        RoomDelivery third = rooms.queue("r", "three", -1, false);

        List<JsonNode> records = records(run("--output", "json", "room", "join", "r", "--count", "3"));

        assertEquals(4, records.size());
        JsonNode joined = records.get(0);
        assertEquals(List.of("event", "room", "clientId"), fieldNames(joined));
        assertEquals("joined", joined.get("event").asText());
        assertEquals("r", joined.get("room").asText());
        assertEquals("c-1", joined.get("clientId").asText());

        JsonNode delivery = records.get(1);
        assertEquals(List.of("room", "messageId", "priority", "payload", "oob", "ackable", "deliveredAt"),
                fieldNames(delivery));
        assertEquals("r", delivery.get("room").asText());
        assertEquals(first.getMessageId(), delivery.get("messageId").asText());
        assertEquals(5, delivery.get("priority").asInt());
        assertEquals("one", delivery.get("payload").asText());
        assertEquals(false, delivery.get("oob").asBoolean());
        assertEquals(true, delivery.get("ackable").asBoolean());
        assertEquals(FakeRooms.NOW + 20, delivery.get("deliveredAt").asLong());
        assertTrue(delivery.get("deliveredAt").isIntegralNumber());
        assertEquals(true, records.get(2).get("oob").asBoolean());
        assertEquals(false, records.get(2).get("ackable").asBoolean());
        assertEquals(-1, records.get(3).get("priority").asInt());

        assertEquals(List.of(first.getMessageId(), third.getMessageId()), ackedIds(), "out-of-band is not acked");
        SessionRequest subscribe = rooms.requests(OpCase.SUBSCRIBE).get(0);
        assertEquals("r", subscribe.getSubscribe().getRoom());
        assertEquals(SubscriptionMode.SYNC, subscribe.getSubscribe().getMode());
        assertEquals(0, rooms.requests(OpCase.OPEN).get(0).getOpen().getClientTimeoutMs());
    }

    @Test
    void asyncJoinsAsAListener() throws Exception {
        rooms.queue("r", "one", 0, false);

        List<JsonNode> records = records(run("--output", "json", "room", "join", "r", "--async", "--count", "1"));

        assertEquals(false, records.get(1).get("ackable").asBoolean());
        assertEquals(SubscriptionMode.ASYNC, rooms.requests(OpCase.SUBSCRIBE).get(0).getSubscribe().getMode());
        assertTrue(ackedIds().isEmpty());
    }

    @Test
    void noAckLeavesDeliveriesUnacked() throws Exception {
        rooms.queue("r", "one", 0, false);

        assertEquals(2, records(run("--output", "json", "room", "join", "r", "--count", "1", "--no-ack")).size());

        assertTrue(ackedIds().isEmpty());
    }

    @Test
    void ackDelayWaitsBeforeAcking() throws Exception {
        RoomDelivery d = rooms.queue("r", "one", 0, false);

        records(run("--output", "json", "room", "join", "r", "--count", "1", "--ack-delay", "300ms"));

        FakeRooms.Received ack = rooms.sessionRequests.stream()
                .filter(q -> q.request().hasAck()).findFirst().orElseThrow();
        assertEquals(d.getMessageId(), ack.request().getAck().getMessageId());
        long waited = ack.atNanos() - rooms.deliveredAt.get(d.getMessageId());
        assertTrue(waited >= TimeUnit.MILLISECONDS.toNanos(250), "acked after " + waited / 1_000_000 + " ms");
    }

    @Test
    void clientTimeoutIsTheSessionsHeartbeatTimeoutAndItKeepsPinging() throws Exception {
        CompletableFuture<Cli.Result> running = CompletableFuture.supplyAsync(
                () -> run("--output", "json", "room", "join", "r", "--client-timeout", "1s", "--timeout", "2s"));

        await().atMost(Duration.ofSeconds(10)).until(() -> rooms.requests(OpCase.PING).size() >= 3);
        List<JsonNode> records = records(running.get(20, TimeUnit.SECONDS));

        assertEquals(1, records.size(), "only the joined event");
        assertEquals(1_000, rooms.requests(OpCase.OPEN).get(0).getOpen().getClientTimeoutMs());
    }

    @Test
    void stopsAfterTheIdleTimeoutAndPrintsATable() {
        rooms.queue("r", "one", 0, false);

        Cli.Result r = run("room", "join", "r", "--timeout", "1s");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals(3, r.outLines().size(), r.out());
        assertTrue(r.outLines().get(0).startsWith("EVENT   ROOM  MESSAGE_ID  PRIORITY  OOB"), r.out());
        assertTrue(r.outLines().get(1).startsWith("joined  r     -"), r.out());
        assertTrue(r.outLines().get(2).startsWith("-       r     m-1         0         false"), r.out());
        assertTrue(r.outLines().get(2).endsWith("one"), r.out());
    }

    @Test
    void anEjectionIsPrintedAndEndsTheCommand() throws Exception {
        rooms.queue("r", "one", 0, false);
        rooms.ejections.put("r", EjectReason.ACK_TIMEOUT);

        List<JsonNode> records = records(run("--output", "json", "room", "join", "r", "--no-ack"));

        assertEquals(3, records.size());
        JsonNode ejected = records.get(2);
        assertEquals(List.of("event", "room", "reason"), fieldNames(ejected));
        assertEquals("ejected", ejected.get("event").asText());
        assertEquals("r", ejected.get("room").asText());
        assertEquals("ACK_TIMEOUT", ejected.get("reason").asText());
    }

    @Test
    void usageErrors() {
        assertEquals(ExitCodes.USAGE, run("room", "join", "r", "--ack-delay", "1s", "--no-ack").exitCode());
        assertEquals(ExitCodes.USAGE, run("room", "join", "r", "--count", "0").exitCode());
        assertEquals(ExitCodes.USAGE, run("room", "join", "r", "--timeout", "0").exitCode());
        assertEquals(ExitCodes.USAGE, run("room", "join", "r", "--ack-delay", "soon").exitCode());
        Cli.Result r = run("room", "join", "r", "--client-timeout", "500ms");
        assertEquals(ExitCodes.USAGE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().contains("clientTimeout must be at least 1s"), r.err());
        assertTrue(rooms.sessionRequests.isEmpty());
    }

    @Test
    void aRefusedSessionExitsWith3() {
        rooms.openFailure = Status.INVALID_ARGUMENT.withDescription("clientTimeout above the maximum");

        Cli.Result r = run("room", "join", "r", "--timeout", "5s");

        assertEquals(ExitCodes.INVALID_REQUEST, r.exitCode());
        assertEquals(List.of("hourglass: request rejected: clientTimeout above the maximum"), r.errLines());
    }

    @Test
    void aRefusedRoomExitsWith3() {
        Cli.Result r = run("room", "join", "bad", "--timeout", "5s");

        assertEquals(ExitCodes.INVALID_REQUEST, r.exitCode());
        assertEquals(List.of("hourglass: request rejected: room 'bad' is not allowed"), r.errLines());
        assertEquals("", r.out());
    }

    @Test
    void noServerExitsWith4WithinTheDeadline() {
        long start = System.nanoTime();

        Cli.Result r = Cli.runWith(Cli.IN_PROCESS, "", "--servers", "nobody:1", "room", "join", "r",
                "--deadline", "500ms");

        assertEquals(ExitCodes.UNAVAILABLE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
    }
}
