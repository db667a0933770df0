package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import io.hourglass.api.v1.PendingRoomMessage;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomMember;
import io.hourglass.api.v1.RoomPeekRequest;
import io.hourglass.api.v1.RoomSendRequest;
import io.hourglass.api.v1.RoomState;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code room send | peek | state | configure}, and the {@code room} group itself. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoomCommandTest {
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
        return Cli.runWith(Cli.IN_PROCESS, "from stdin", all.toArray(new String[0]));
    }

    private JsonNode onlyRecord(Cli.Result r) throws Exception {
        assertEquals(0, r.exitCode(), r.err());
        assertEquals("", r.err());
        assertEquals(1, r.outLines().size(), r.out());
        return json.readTree(r.outLines().get(0));
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    @Test
    void sendPrintsTheMessageRecord() throws Exception {
        JsonNode record = onlyRecord(run("--output", "json", "room", "send", "r", "hello", "--priority", "-3"));

        assertEquals(List.of("room", "messageId", "priority", "oob"), fieldNames(record));
        assertEquals("r", record.get("room").asText());
        assertEquals("m-1", record.get("messageId").asText());
        assertEquals(-3, record.get("priority").asInt());
        assertTrue(record.get("priority").isIntegralNumber());
        assertTrue(record.get("oob").isBoolean());
        assertEquals(false, record.get("oob").asBoolean());
        RoomSendRequest sent = (RoomSendRequest) rooms.unaryRequests.get(0);
        assertTrue(!sent.getProducerId().isEmpty(), "the send carries an idempotency key");
        assertEquals(RoomSendRequest.newBuilder().setRoom("r").setPayload(ByteString.copyFromUtf8("hello"))
                .setPriority(-3).setProducerId(sent.getProducerId()).build(), sent);
    }

    @Test
    void sendOutOfBand() throws Exception {
        JsonNode record = onlyRecord(run("room", "send", "r", "now", "--oob", "--output", "json"));

        assertEquals("o-1", record.get("messageId").asText());
        assertEquals(0, record.get("priority").asInt());
        assertEquals(true, record.get("oob").asBoolean());
        assertEquals(1, rooms.unaryRequests.size());
        assertEquals("now", ((RoomSendRequest) rooms.unaryRequests.get(0)).getPayload().toStringUtf8());
    }

    @Test
    void sendReadsStandardInputWithoutPayloadAndPrintsATable() {
        Cli.Result r = run("room", "send", "r");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals(List.of("ROOM  MESSAGE_ID  PRIORITY  OOB", "r     m-1         0         false"), r.outLines());
        assertEquals("from stdin", ((RoomSendRequest) rooms.unaryRequests.get(0)).getPayload().toStringUtf8());
    }

    @Test
    void sendErrors() {
        Cli.Result conflict = run("room", "send", "r", "x", "--oob", "--priority", "1");
        assertEquals(ExitCodes.USAGE, conflict.exitCode());
        assertEquals(1, conflict.errLines().size(), conflict.err());
        assertEquals(ExitCodes.USAGE, run("room", "send", "r", "x", "--priority", "high").exitCode());
        assertEquals(ExitCodes.USAGE, run("room", "send", " ", "x").exitCode());
        assertTrue(rooms.unaryRequests.isEmpty());

        Cli.Result refused = run("room", "send", "bad", "x");
        assertEquals(ExitCodes.INVALID_REQUEST, refused.exitCode());
        assertEquals(List.of("hourglass: request rejected: room 'bad' is not allowed"), refused.errLines());
        assertEquals("", refused.out());
    }

    @Test
    void noServerExitsWith4WithinTheDeadline() {
        long start = System.nanoTime();

        Cli.Result r = Cli.runWith(Cli.IN_PROCESS, "", "--servers", "nobody:1", "--deadline", "300ms",
                "room", "state", "r");

        assertEquals(ExitCodes.UNAVAILABLE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().contains("no server available"), r.err());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
    }

    @Test
    void peekPrintsOneRecordPerPendingMessage() throws Exception {
        rooms.pending = List.of(
                PendingRoomMessage.newBuilder().setMessageId("m-3").setPriority(1)
                        .setPayload(ByteString.copyFromUtf8("three")).setSentAtMs(FakeRooms.NOW + 3).build(),
                PendingRoomMessage.newBuilder().setMessageId("m-2").setPriority(3)
                        .setPayload(ByteString.copyFromUtf8("two")).setSentAtMs(FakeRooms.NOW + 2).build());

        Cli.Result r = run("--output", "json", "room", "peek", "r", "--offset", "1", "--limit", "5");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals(2, r.outLines().size());
        JsonNode first = json.readTree(r.outLines().get(0));
        assertEquals(List.of("messageId", "priority", "payload", "sentAt"), fieldNames(first));
        assertEquals("m-3", first.get("messageId").asText());
        assertEquals(1, first.get("priority").asInt());
        assertEquals("three", first.get("payload").asText());
        assertEquals(FakeRooms.NOW + 3, first.get("sentAt").asLong());
        assertTrue(first.get("sentAt").isIntegralNumber());
        assertEquals(RoomPeekRequest.newBuilder().setRoom("r").setOffset(1).setLimit(5).build(),
                rooms.unaryRequests.get(0));
    }

    @Test
    void peekDefaultsAndErrors() {
        Cli.Result empty = run("room", "peek", "r");
        assertEquals(0, empty.exitCode(), empty.err());
        assertEquals(TableRecordPrinter.NONE + "\n", empty.out()); // table mode says an empty result is empty
        assertEquals(RoomPeekRequest.newBuilder().setRoom("r").setLimit(100).build(), rooms.unaryRequests.get(0));

        Cli.Result negative = run("room", "peek", "r", "--offset", "-1");
        assertEquals(ExitCodes.USAGE, negative.exitCode(), negative.err());
        assertEquals(ExitCodes.USAGE, run("room", "peek", "r", "--limit", "0").exitCode());
        assertEquals(1, rooms.unaryRequests.size());
    }

    @Test
    void statePrintsOneRecordWithTheMembers() throws Exception {
        rooms.state = RoomState.newBuilder().setBacklog(2).setInFlight("m-1").setListeners(1)
                .addMembers(RoomMember.newBuilder().setClientId("c-1").setLastSeenMs(FakeRooms.NOW).setReady(false))
                .addMembers(RoomMember.newBuilder().setClientId("c-2").setLastSeenMs(FakeRooms.NOW + 5).setReady(true))
                .setAtLeastOnce(true).setAckTimeoutMs(90_000).setRecovering(true).build();

        JsonNode record = onlyRecord(run("--output", "json", "room", "state", "r"));

        assertEquals(List.of("room", "backlog", "members", "inFlight", "listeners", "atLeastOnce", "ackTimeout",
                "recovering"), fieldNames(record));
        assertEquals(true, record.get("recovering").asBoolean());
        assertEquals("r", record.get("room").asText());
        assertEquals(2, record.get("backlog").asLong());
        assertEquals("m-1", record.get("inFlight").asText());
        assertEquals(1, record.get("listeners").asInt());
        assertEquals(true, record.get("atLeastOnce").asBoolean());
        assertEquals("1m30s", record.get("ackTimeout").asText());
        JsonNode members = record.get("members");
        assertTrue(members.isArray());
        assertEquals(2, members.size());
        assertEquals(List.of("clientId", "lastSeen", "ready"), fieldNames(members.get(0)));
        assertEquals("c-1", members.get(0).get("clientId").asText());
        assertEquals(FakeRooms.NOW, members.get(0).get("lastSeen").asLong());
        assertTrue(members.get(0).get("lastSeen").isIntegralNumber());
        assertEquals(false, members.get(0).get("ready").asBoolean());
        assertEquals(true, members.get(1).get("ready").asBoolean());
    }

    @Test
    void stateOfAnIdleRoomHasNoInFlightMessage() throws Exception {
        JsonNode record = onlyRecord(run("--output", "json", "room", "state", "idle"));

        assertTrue(record.get("inFlight").isNull());
        assertTrue(record.get("ackTimeout").isNull());
        assertEquals(0, record.get("members").size());

        Cli.Result table = run("room", "state", "idle");
        assertEquals(List.of("ROOM  BACKLOG  IN_FLIGHT  LISTENERS  AT_LEAST_ONCE  ACK_TIMEOUT  RECOVERING  MEMBERS",
                "idle  0        -          0          false          -            false       -"), table.outLines());
    }

    @Test
    void stateTableShowsTheMembers() {
        rooms.state = RoomState.newBuilder().setBacklog(1).setInFlight("m-1")
                .addMembers(RoomMember.newBuilder().setClientId("c-1").setLastSeenMs(FakeRooms.NOW).setReady(true))
                .build();

        Cli.Result r = run("room", "state", "r");

        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.outLines().get(1).endsWith("c-1 ready (seen 2023-11-14T22:13:20.000Z)"), r.out());
    }

    @Test
    void configureSetsTheGuarantee() throws Exception {
        JsonNode record = onlyRecord(run("--output", "json", "room", "configure", "r", "--at-least-once",
                "--ack-timeout", "5s"));

        assertEquals(List.of("room", "atLeastOnce", "ackTimeout"), fieldNames(record));
        assertEquals(true, record.get("atLeastOnce").asBoolean());
        assertEquals("5s", record.get("ackTimeout").asText());
        assertEquals(RoomConfigureRequest.newBuilder().setRoom("r").setAtLeastOnce(true).setAckTimeoutMs(5_000).build(),
                rooms.unaryRequests.get(0));

        JsonNode reset = onlyRecord(run("--output", "json", "room", "configure", "r"));
        assertEquals(false, reset.get("atLeastOnce").asBoolean());
        assertTrue(reset.get("ackTimeout").isNull());
        assertEquals(RoomConfigureRequest.newBuilder().setRoom("r").build(), rooms.unaryRequests.get(1));
    }

    @Test
    void configureRefusesAnAckTimeoutUnderOneSecond() {
        Cli.Result r = run("room", "configure", "r", "--ack-timeout", "500ms");

        assertEquals(ExitCodes.USAGE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(rooms.unaryRequests.isEmpty());
        assertEquals(ExitCodes.INVALID_REQUEST, run("room", "configure", "bad").exitCode());
    }

    @Test
    void roomWithoutASubcommandIsAUsageError() {
        Cli.Result r = run("room");

        assertEquals(ExitCodes.USAGE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().contains("send, join, peek, state, list, metrics or configure"), r.err());
        assertTrue(run("room", "--help").out().contains("join"));
        assertTrue(run("--help").out().contains("room"));
    }

    @Test
    void metricsPrintsTheLargestBacklogsAndNamesTopInItsErrors() throws Exception {
        rooms.metrics = io.hourglass.api.v1.RoomMetricsResponse.newBuilder().setRoomsWithBacklog(7)
                .addTop(io.hourglass.api.v1.RoomBacklog.newBuilder().setRoom("busy").setBacklog(40))
                .addTop(io.hourglass.api.v1.RoomBacklog.newBuilder().setRoom("calm").setBacklog(2)).build();
        Cli.Result r = run("--output", "json", "room", "metrics", "--top", "2");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(List.of("{\"room\":\"busy\",\"backlog\":40}", "{\"room\":\"calm\",\"backlog\":2}"), r.outLines());
        assertEquals("rooms with a backlog: 7", r.err().strip());
        assertEquals(io.hourglass.api.v1.RoomMetricsRequest.newBuilder().setTopN(2).build(), rooms.unaryRequests.get(0));

        for (String bad : List.of("-1", "0", "10001")) {
            Cli.Result refused = run("room", "metrics", "--top", bad);
            assertEquals(ExitCodes.USAGE, refused.exitCode(), refused.err());
            assertEquals(1, refused.errLines().size(), refused.err());
            assertTrue(refused.err().contains("--top must be between 1 and 10000, got " + bad), refused.err());
        }
    }

    @Test
    void listPrintsOneStateRecordPerRoomAndNoneWhenEmpty() throws Exception {
        Cli.Result empty = run("room", "list");
        assertEquals(0, empty.exitCode(), empty.err());
        assertEquals(TableRecordPrinter.NONE + "\n", empty.out());

        rooms.listed = List.of(io.hourglass.api.v1.RoomState.newBuilder().setRoom("a").setBacklog(3).build(),
                io.hourglass.api.v1.RoomState.newBuilder().setRoom("b").setListeners(2).build());
        Cli.Result r = run("--output", "json", "room", "list", "--limit", "5");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals(2, r.outLines().size(), r.out());
        assertTrue(r.outLines().get(0).startsWith("{\"room\":\"a\",\"backlog\":3"), r.out());
        assertEquals(ExitCodes.USAGE, run("room", "list", "--limit", "0").exitCode());
    }
}
