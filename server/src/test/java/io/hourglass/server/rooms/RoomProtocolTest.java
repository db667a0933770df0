package io.hourglass.server.rooms;

import static io.hourglass.api.v1.SubscriptionMode.ASYNC;
import static io.hourglass.api.v1.SubscriptionMode.SYNC;
import static io.hourglass.server.rooms.RoomsApi.failure;
import static io.hourglass.server.rooms.RoomsApi.invalid;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.hourglass.api.v1.EjectReason;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomMetricsRequest;
import io.hourglass.api.v1.RoomMetricsResponse;
import io.hourglass.api.v1.RoomPeekRequest;
import io.hourglass.api.v1.RoomSendRequest;
import io.hourglass.api.v1.RoomState;
import io.hourglass.api.v1.RoomStateRequest;
import io.hourglass.api.v1.RoomSubscribe;
import io.hourglass.api.v1.RoomsGrpc;
import io.hourglass.api.v1.SessionOpen;
import io.hourglass.api.v1.SessionReply;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionResponse;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Rooms wire protocol on a real node, through raw stubs: how sessions open and end, what a
 * refused request looks like, and the validation of every unary call. The node buffers at most
 * {@value #SESSION_BUFFER} frames per session, so that a client that stops reading is cut off quickly.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RoomProtocolTest {
    private static final int SESSION_BUFFER = 64;

    @TempDir
    static Path dir;
    private static TestNode node;
    private static ManagedChannel channel;
    private static RoomsApi api;
    private static ScheduledExecutorService pingers;
    private final List<SessionClient> clients = new ArrayList<>();
    private String room;

    @BeforeAll
    static void start() {
        node = TestNode.start(dir, Map.of("delivery.consumerQueueSize", Integer.toString(SESSION_BUFFER)));
        channel = ManagedChannelBuilder.forTarget(node.target()).usePlaintext().build();
        api = new RoomsApi(channel);
        pingers = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "test-pinger");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterAll
    static void stop() throws InterruptedException {
        pingers.shutdownNow();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        node.close();
    }

    @BeforeEach
    void nameTheRoom(TestInfo test) {
        room = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(SessionClient::close);
    }

    private SessionClient client(String name, long timeoutMs) {
        SessionClient c = SessionClient.open(channel, name, timeoutMs);
        clients.add(c);
        return c;
    }

    private SessionClient client(String name) {
        return client(name, 0);
    }

    private SessionClient unopened(String name) {
        SessionClient c = SessionClient.start(channel, name);
        clients.add(c);
        return c;
    }

    private static void assertRefused(SessionReply r, String mentioning) {
        assertEquals("INVALID_ARGUMENT", r.getOutcome(), r::toString);
        assertFalse(r.getOk());
        assertTrue(r.getError().contains(mentioning), () -> "'" + r.getError() + "' should mention " + mentioning);
    }

    // ---- opening a session

    @Test
    void openAnswersAFreshClientIdAndTheSessionsTimeout() {
        SessionClient a = client("A");
        SessionClient b = client("B", 1_500);
        assertNotEquals(a.clientId(), b.clientId());
        UUID.fromString(a.clientId());
        assertEquals(30_000, a.frames().get(0).getOpened().getClientTimeoutMs(), "0 means rooms.clientTimeout");
        assertEquals(1_500, b.frames().get(0).getOpened().getClientTimeoutMs());
    }

    @Test
    void aFirstFrameOtherThanOpenEndsTheStreamWithInvalidArgument() {
        SessionClient c = unopened("C");
        c.send(SessionRequest.newBuilder().setSubscribe(RoomSubscribe.newBuilder().setRoom(room)));
        Status s = c.awaitEnd();
        assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode(), s::toString);
        assertTrue(s.getDescription().contains("first Session frame must be open, got subscribe")
                || s.getDescription().contains("must be open"), s::toString);

        SessionClient empty = unopened("E");
        empty.send(SessionRequest.newBuilder());
        Status e = empty.awaitEnd();
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getCode());
        assertTrue(e.getDescription().contains("an empty frame"), e::toString);
    }

    @Test
    void aClientTimeoutUnderOneSecondIsInvalid() {
        for (long ms : new long[] {500, -1}) {
            SessionClient c = unopened("C" + ms);
            c.send(SessionRequest.newBuilder().setOpen(SessionOpen.newBuilder().setClientTimeoutMs(ms)));
            Status s = c.awaitEnd();
            assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode(), s::toString);
            assertTrue(s.getDescription().contains("client timeout") || s.getDescription().contains("client_timeout"),
                    s::toString);
        }
    }

    @Test
    void framesSentBeforeOpenedAreServedInOrderAfterIt() {
        SessionClient c = unopened("C");
        c.send(SessionRequest.newBuilder().setOpen(SessionOpen.getDefaultInstance()));
        var subscribed = c.send(SessionRequest.newBuilder().setSubscribe(RoomSubscribe.newBuilder().setRoom(room)));
        var again = c.send(SessionRequest.newBuilder().setSubscribe(RoomSubscribe.newBuilder().setRoom(room)));
        assertEquals("SUBSCRIBED", subscribed.orTimeout(20, TimeUnit.SECONDS).join().getOutcome());
        assertEquals("ALREADY_SUBSCRIBED", again.orTimeout(20, TimeUnit.SECONDS).join().getOutcome());
        assertTrue(c.frames().get(0).hasOpened(), "opened comes first");
    }

    // ---- requests within a session

    @Test
    void malformedRequestsAreRefusedWithAReasonAndTheStreamStaysOpen() {
        SessionClient a = client("A");
        assertRefused(a.subscribe("no spaces allowed", SYNC), "may only contain");
        assertRefused(a.subscribe("", SYNC), "room must not be empty");
        assertRefused(a.subscribe("x".repeat(201), SYNC), "limits.maxTopicLength");
        assertRefused(a.request(SessionRequest.newBuilder().setSubscribe(RoomSubscribe.newBuilder().setRoom(room)
                .setModeValue(7))), "subscription mode");
        assertRefused(a.ack("bad room", "x"), "may only contain");
        assertRefused(a.unsubscribe(""), "room must not be empty");
        assertRefused(a.request(SessionRequest.newBuilder().setOpen(SessionOpen.getDefaultInstance())),
                "already open");
        assertRefused(a.request(SessionRequest.newBuilder()), "empty Session frame");
        assertEquals("OK", a.ping().getOutcome());
        assertFalse(a.ended());
    }

    @Test
    void aMalformedSessionIdIsRefusedWithItsLengthAndOnlyAShortPrefix() {
        SessionClient a = client("A");
        SessionReply huge = a.request(SessionRequest.newBuilder().setSubscribe(RoomSubscribe.newBuilder()
                .setRoom(room).setSessionId("s".repeat(100_000))));
        assertRefused(huge, "session_id must be 1 to 64 letters, digits or . _ - :");
        assertTrue(huge.getError().endsWith("got 100000 characters: 'ssssssssssssssss…'"), huge::getError);
        assertRefused(a.request(SessionRequest.newBuilder().setSubscribe(RoomSubscribe.newBuilder()
                .setRoom(room).setSessionId("no spaces"))), "got 9 characters: 'no spaces'");
        assertEquals("SUBSCRIBED", a.request(SessionRequest.newBuilder().setSubscribe(RoomSubscribe.newBuilder()
                .setRoom(room).setSessionId(UUID.randomUUID().toString()))).getOutcome(), "the stream stays open");
    }

    @Test
    void outcomesThatChangeNothingAreNotOkAndTheStreamStaysOpen() {
        SessionClient a = client("A");
        SessionClient other = client("O").join(room + "Other", SYNC);
        assertEquals("SUBSCRIBED", a.subscribe(room, SYNC).getOutcome());
        SessionReply twice = a.subscribe(room, ASYNC);
        assertEquals("ALREADY_SUBSCRIBED", twice.getOutcome());
        assertFalse(twice.getOk());
        SessionReply notIn = a.unsubscribe(room + "Elsewhere");
        assertEquals("NOT_SUBSCRIBED", notIn.getOutcome());
        assertFalse(notIn.getOk());

        String m1 = api.send(room, "m1");
        String m2 = api.send(room, "m2");
        String foreign = api.send(room + "Other", "f1");
        a.awaitPayloads("m1");
        other.awaitPayloads("f1");
        String oob = api.sendOutOfBand(room, "o1").getMessageId();
        a.awaitPayloads("m1", "o1");

        assertEquals("UNKNOWN_MESSAGE", a.ack(room, "not-a-message-id").getOutcome());
        assertEquals("UNKNOWN_MESSAGE", a.ack(room, "").getOutcome());
        assertEquals("UNKNOWN_MESSAGE", a.ack(room, foreign).getOutcome(), "another room's id");
        assertEquals("NOT_IN_FLIGHT", a.ack(room, m2).getOutcome(), "not released yet");
        assertEquals("OUT_OF_BAND", a.ack(room, oob).getOutcome());
        assertEquals("NOT_MEMBER", a.ack(room + "Other", foreign).getOutcome());
        for (SessionResponse f : a.frames()) {
            if (f.hasReply() && !f.getReply().getOutcome().equals("SUBSCRIBED")) {
                assertFalse(f.getReply().getOk(), f::toString);
            }
        }
        assertFalse(a.ended());
        SessionReply acked = a.ack(room, m1);
        assertEquals("ACKED", acked.getOutcome());
        assertTrue(acked.getOk());
        a.awaitPayloads("m1", "o1", "m2");
    }

    @Test
    void deliveriesCarryPriorityProducerAndTimes() {
        SessionClient a = client("A").join(room, SYNC);
        long before = System.currentTimeMillis();
        String id = api.stub().send(RoomSendRequest.newBuilder().setRoom(room).setPriority(-42)
                .setPayload(ByteString.copyFromUtf8("p")).setClientId(a.clientId()).build()).getMessageId();
        var d = a.awaitDelivery("p");
        assertEquals(id, d.getMessageId());
        assertEquals(-42, d.getPriority());
        assertEquals(a.clientId(), d.getProducer());
        assertTrue(d.getSentAtMs() >= before - 1_000 && d.getDeliveredAtMs() >= d.getSentAtMs(), d::toString);
    }

    @Test
    void theWholeIntRangeOfPrioritiesIsAcceptedAndOrdered() {
        SessionClient a = client("A").join(room, SYNC);
        api.send(room, 0, "first");
        a.awaitPayloads("first");
        api.send(room, Integer.MAX_VALUE, "max");
        api.send(room, 0, "zero");
        api.send(room, Integer.MIN_VALUE, "min");
        api.send(room, -1, "minus1");
        assertEquals(List.of("min", "minus1", "zero", "max"), api.peek(room, 0, 10));
        List<String> expected = new ArrayList<>(List.of("first"));
        for (String next : List.of("min", "minus1", "zero", "max")) {
            a.ackLast();
            expected.add(next);
            a.awaitPayloads(expected.toArray(String[]::new));
        }
    }

    @Test
    void aSendNamingTheSessionCountsAsItsHeartbeat() {
        SessionClient a = client("A").join(room, SYNC);
        long joined = api.state(room).getMembers(0).getLastSeenMs();
        await().atMost(SessionClient.WAIT).until(() -> {
            api.stub().send(RoomSendRequest.newBuilder().setRoom(room + "Elsewhere").setClientId(a.clientId())
                    .setPayload(ByteString.copyFromUtf8("hb")).build());
            return api.state(room).getMembers(0).getLastSeenMs() > joined;
        });
    }

    // ---- how sessions end

    @Test
    void aClientThatGoesAwayLeavesItsRoomsAndReleasesTheGate() {
        SessionClient a = client("A").join(room, SYNC);
        SessionClient b = client("B").join(room, SYNC);
        SessionClient c = client("C").join(room, SYNC);
        api.send(room, "m1");
        api.send(room, "m2");
        a.awaitPayloads("m1");
        a.ackLast();
        b.cancel();
        c.close();
        assertEquals(Status.Code.OK, c.awaitEnd().getCode(), "a half-close is answered by completing the stream");
        a.awaitPayloads("m1", "m2");
        RoomState s = api.state(room);
        assertEquals(List.of(a.clientId()), s.getMembersList().stream().map(m -> m.getClientId()).toList());
    }

    @Test
    void evictionFromTheLastRoomEndsTheSessionWithUnavailable() {
        SessionClient a = client("A", 1_000).join(room, SYNC);
        assertEquals(EjectReason.TIMEOUT, a.awaitEjected(room).getReason());
        Status s = a.awaitEnd();
        assertEquals(Status.Code.UNAVAILABLE, s.getCode(), s::toString);
        assertTrue(s.getDescription().contains("evicted"), s::toString);
        assertEquals(0, api.state(room).getMembersCount());
    }

    @Test
    void aRoomsAckTimeoutEjectsAHolderThatDoesNotAck() {
        api.configure(room, false, 1_000);
        assertEquals(1_000, api.state(room).getAckTimeoutMs());
        SessionClient holder = client("H").join(room, SYNC);
        SessionClient b = client("B").autoAck().join(room, SYNC);
        holder.startPinging(pingers, Duration.ofMillis(300));
        api.send(room, "m1");
        api.send(room, "m2");
        holder.awaitPayloads("m1");
        assertEquals(EjectReason.ACK_TIMEOUT, holder.awaitEjected(room).getReason());
        b.awaitPayloads("m1", "m2");
        holder.stopPinging();
    }

    @Test
    void aClientThatStopsReadingIsCutOffWithResourceExhaustedAndDisconnected() {
        AtomicReference<ClientCallStreamObserver<SessionRequest>> call = new AtomicReference<>();
        List<SessionResponse> got = new CopyOnWriteArrayList<>();
        AtomicReference<Throwable> ended = new AtomicReference<>();
        var slowReader = new ClientResponseObserver<SessionRequest, SessionResponse>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<SessionRequest> requestStream) {
                call.set(requestStream);
                requestStream.disableAutoRequestWithInitial(2); // opened and the subscribe reply, then nothing
            }

            @Override
            public void onNext(SessionResponse value) {
                got.add(value);
            }

            @Override
            public void onError(Throwable t) {
                ended.set(t);
            }

            @Override
            public void onCompleted() {
                ended.set(Status.OK.asRuntimeException());
            }
        };
        var requests = RoomsGrpc.newStub(channel).session(slowReader);
        requests.onNext(SessionRequest.newBuilder().setRequestId(1).setOpen(SessionOpen.getDefaultInstance()).build());
        requests.onNext(SessionRequest.newBuilder().setRequestId(2).setSubscribe(RoomSubscribe.newBuilder()
                .setRoom(room).setMode(SYNC)).build());
        await().atMost(SessionClient.WAIT).until(() -> got.size() == 2);
        assertEquals("SUBSCRIBED", got.get(1).getReply().getOutcome());

        ByteString big = ByteString.copyFrom(new byte[64 * 1024]);
        int sent = 0;
        while (sent < 5_000) {
            int recipients = api.stub().sendOutOfBand(RoomSendRequest.newBuilder().setRoom(room).setPayload(big)
                    .build()).getRecipients();
            sent++;
            if (recipients == 0) {
                break;
            }
        }
        assertTrue(sent < 5_000, "the session was never cut off");
        assertEquals(0, api.state(room).getMembersCount(), "the session left the engine");
        call.get().request(Integer.MAX_VALUE); // read what the transport held; the status comes after it
        await().atMost(SessionClient.WAIT).until(() -> ended.get() != null);
        Status s = Status.fromThrowable(ended.get());
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s::toString);
        assertTrue(s.getDescription().contains("did not keep up"), s::toString);
        assertTrue(node.node().metrics().render().contains("hourglass_room_sessions_cut_off_total 1.0"));
    }

    // ---- unary calls

    @Test
    void unaryRequestsAreValidatedWithReasonsAPersonUnderstands() {
        assertTrue(invalid(() -> api.send("no spaces", "x")).contains("may only contain"));
        assertTrue(invalid(() -> api.send("", "x")).contains("room must not be empty"));
        ByteString tooBig = ByteString.copyFrom(new byte[1_048_577]);
        String payload = invalid(() -> api.stub().send(RoomSendRequest.newBuilder().setRoom(room).setPayload(tooBig)
                .build()));
        assertTrue(payload.contains("payload is 1048577 bytes; the limit is 1048576"), payload);
        assertTrue(invalid(() -> api.stub().sendOutOfBand(RoomSendRequest.newBuilder().setRoom(room)
                .setPayload(tooBig).build())).contains("limits.maxPayloadBytes"));
        assertTrue(invalid(() -> api.stub().send(RoomSendRequest.newBuilder().setRoom(room).setClientId("someone")
                .build())).contains("not a client id"));
        assertTrue(invalid(() -> api.stub().peek(RoomPeekRequest.newBuilder().setRoom(room).setOffset(-1).build()))
                .contains("must not be negative"));
        assertTrue(invalid(() -> api.stub().peek(RoomPeekRequest.newBuilder().setRoom(room).setLimit(10_001).build()))
                .contains("at most 10000"));
        assertTrue(invalid(() -> api.stub().state(RoomStateRequest.newBuilder().setRoom("a b").build()))
                .contains("may only contain"));
        assertTrue(invalid(() -> api.stub().metrics(RoomMetricsRequest.newBuilder().setTopN(-1).build()))
                .contains("top_n (--top) must be between 0 and 10000, got -1"));
        assertTrue(invalid(() -> api.stub().configure(RoomConfigureRequest.newBuilder().setRoom(room)
                .setAckTimeoutMs(500).build())).contains("at least 1s"));
        assertTrue(invalid(() -> api.stub().configure(RoomConfigureRequest.newBuilder().setRoom(room)
                .setAckTimeoutMs(-5).build())).contains("ack_timeout_ms"));
        assertEquals(Status.Code.INVALID_ARGUMENT, failure(() -> api.stub().configure(
                RoomConfigureRequest.newBuilder().build())).getCode());
    }

    @Test
    void configureIsReplicatedAndShownInTheState() {
        api.configure(room, true, 2_000);
        RoomState s = api.state(room);
        assertTrue(s.getAtLeastOnce());
        assertEquals(2_000, s.getAckTimeoutMs());
        api.configure(room, false, 0);
        s = api.state(room);
        assertFalse(s.getAtLeastOnce());
        assertEquals(0, s.getAckTimeoutMs());
    }

    @Test
    void metricsCountRoomsWithBacklogAndListTheLargest() {
        String big = room + "Big";
        String small = room + "Small";
        client("A").join(big, SYNC).join(small, SYNC);
        for (int i = 0; i < 4; i++) {
            api.send(big, "b" + i);
        }
        api.send(small, "s0");
        api.send(small, "s1");
        await().atMost(SessionClient.WAIT).until(() -> api.state(big).getBacklog() == 3
                && api.state(small).getBacklog() == 1);
        RoomMetricsResponse all = api.metrics(1_000);
        assertTrue(all.getRoomsWithBacklog() >= 2);
        assertEquals(all.getRoomsWithBacklog(), all.getTopCount());
        assertTrue(all.getTopList().stream().anyMatch(r -> r.getRoom().equals(big) && r.getBacklog() == 3));
        assertTrue(all.getTopList().stream().anyMatch(r -> r.getRoom().equals(small) && r.getBacklog() == 1));
        assertEquals(1, api.metrics(1).getTopCount(), "exactly N");
        assertEquals(0, api.metrics(0).getTopCount());
    }

    @Test
    void roomListNamesEveryRoomInNameOrderAPageAtATime() {
        String a = room + "A";
        String b = room + "B";
        client("L").join(a, SYNC).join(b, SYNC);
        api.send(b, "b0");
        api.send(b, "b1");
        await().atMost(SessionClient.WAIT).until(() -> api.state(b).getBacklog() == 1);
        List<io.hourglass.api.v1.RoomState> all = api.stub().list(io.hourglass.api.v1.RoomListRequest.newBuilder()
                .setLimit(10_000).build()).getRoomsList();
        List<String> names = all.stream().map(io.hourglass.api.v1.RoomState::getRoom).toList();
        assertTrue(names.contains(a) && names.contains(b), names.toString());
        assertEquals(names.stream().sorted().toList(), names, "by name");
        assertEquals(1, all.stream().filter(r -> r.getRoom().equals(b)).findFirst().orElseThrow().getBacklog());
        int at = names.indexOf(a);
        List<io.hourglass.api.v1.RoomState> page = api.stub().list(io.hourglass.api.v1.RoomListRequest.newBuilder()
                .setOffset(at).setLimit(2).build()).getRoomsList();
        assertEquals(List.of(a, b), page.stream().map(io.hourglass.api.v1.RoomState::getRoom).toList());
    }
}
