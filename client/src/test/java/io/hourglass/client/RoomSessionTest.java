package io.hourglass.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.hourglass.api.v1.EjectReason;
import io.hourglass.api.v1.RoomSubscribe;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionRequest.OpCase;
import io.hourglass.api.v1.SubscriptionMode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoomSessionTest {
    private FakeRooms server;
    private HourglassClient client;
    private final BlockingQueue<ReceivedRoomMessage> received = new LinkedBlockingQueue<>();
    private final List<Object> events = new CopyOnWriteArrayList<>();
    private final List<String> threads = new CopyOnWriteArrayList<>();
    private final RoomHandler recorder = new RoomHandler() {
        @Override
        public void onMessage(ReceivedRoomMessage message) {
            threads.add(Thread.currentThread().getName());
            events.add(message);
            received.add(message);
        }

        @Override
        public void onEjected(RoomEjection ejection) {
            events.add(ejection);
        }

        @Override
        public void onOpened(String clientId) {
            events.add("opened " + clientId);
        }

        @Override
        public void onSubscribed(String room, String clientId, RoomReply reply) {
            events.add("subscribed " + room + " as " + clientId + ": " + reply.outcome());
        }
    };

    @BeforeEach
    void start() throws Exception {
        server = new FakeRooms();
        client = HourglassClient.builder().servers(server.address()).channelFactory(FakeRooms.channels()).build();
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    private RoomSessionOptions options() {
        return RoomSessionOptions.of(recorder).withBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
                .withCloseTimeout(Duration.ofSeconds(2));
    }

    private static RoomReply reply(CompletableFuture<RoomReply> future) throws Exception {
        return future.get(10, TimeUnit.SECONDS);
    }

    private ReceivedRoomMessage next() throws InterruptedException {
        ReceivedRoomMessage m = received.poll(10, TimeUnit.SECONDS);
        assertTrue(m != null, "no delivery within 10 s");
        return m;
    }

    @Test
    void opensSubscribesReceivesAndAcks() throws Exception {
        RoomSession session = client.rooms().openSession(options());
        assertEquals("c-1", session.opened().get(10, TimeUnit.SECONDS));
        assertEquals(new RoomReply(RoomReply.SUBSCRIBED, true), reply(session.subscribe("r", RoomMode.SYNC)));

        String id = client.rooms().send("r", "x", 3);
        ReceivedRoomMessage m = next();
        assertEquals("r", m.room());
        assertEquals(id, m.messageId());
        assertEquals(3, m.priority());
        assertEquals("x", m.payloadUtf8());
        assertTrue(m.ackable());
        assertFalse(m.oob());
        assertTrue(m.sentAtMs() > FakeRooms.NOW && m.deliveredAtMs() > m.sentAtMs());

        String second = client.rooms().send("r", "y", 0);
        assertTrue(received.isEmpty(), "the gate is closed until the ack");
        assertEquals(new RoomReply(RoomReply.ACKED, true), reply(session.ack(m)));
        assertEquals(second, next().messageId());
        assertEquals(new RoomReply(RoomReply.NOT_IN_FLIGHT, false), reply(session.ack(m)));

        assertEquals(List.of("opened c-1", "subscribed r as c-1: SUBSCRIBED"), events.subList(0, 2));
        assertEquals(m, events.get(2));
        assertEquals(1, threads.stream().distinct().count());
        assertTrue(threads.get(0).startsWith("hourglass-room-session-"));
        assertEquals("c-1", session.clientId());
        assertEquals(Duration.ofSeconds(2), session.clientTimeout());
        assertEquals(0, server.session(0).received.get(0).getOpen().getClientTimeoutMs());
    }

    @Test
    void syncMembersGateEachOtherAndListenersFollow() throws Exception {
        BlockingQueue<ReceivedRoomMessage> toB = new LinkedBlockingQueue<>();
        BlockingQueue<ReceivedRoomMessage> toN = new LinkedBlockingQueue<>();
        RoomSession a = client.rooms().openSession(options());
        RoomSession b = client.rooms().openSession(RoomSessionOptions.of(toB::add));
        RoomSession n = client.rooms().openSession(RoomSessionOptions.of(toN::add));
        reply(a.subscribe("r", RoomMode.SYNC));
        reply(b.subscribe("r", RoomMode.SYNC));
        reply(n.subscribe("r", RoomMode.ASYNC));

        String m1 = client.rooms().send("r", "m1", 0);
        client.rooms().send("r", "m2", 0);
        assertEquals(m1, next().messageId());
        ReceivedRoomMessage bm1 = toB.poll(10, TimeUnit.SECONDS);
        ReceivedRoomMessage nm1 = toN.poll(10, TimeUnit.SECONDS);
        assertEquals(m1, bm1.messageId());
        assertEquals(m1, nm1.messageId());
        assertFalse(nm1.ackable(), "a listener's delivery has no ack handle");

        assertTrue(reply(a.ack("r", m1)).ok());
        assertEquals(1, client.rooms().state("r").backlog(), "m2 withheld until B acks");
        assertTrue(reply(b.ack(bm1)).ok());
        assertEquals("m2", next().payloadUtf8());
        assertEquals("m2", toN.poll(10, TimeUnit.SECONDS).payloadUtf8());
    }

    @Test
    void pingsOnTheConfiguredInterval() {
        client.rooms().openSession(options().withPingInterval(Duration.ofMillis(50)));

        await().atMost(Duration.ofSeconds(5)).until(() -> !server.sessions.isEmpty()
                && server.session(0).requests(OpCase.PING).size() >= 5);
    }

    @Test
    void pingsEveryThirdOfTheClientTimeoutByDefault() {
        RoomSession session = client.rooms().openSession(options().withClientTimeout(Duration.ofMillis(1_500)));

        await().atMost(Duration.ofSeconds(5)).until(() -> session.clientTimeout() != null);
        FakeRooms.FakeSession s = server.session(0);
        assertEquals(1_500, s.received.get(0).getOpen().getClientTimeoutMs());
        await().atMost(Duration.ofSeconds(5)).until(() -> s.requests(OpCase.PING).size() >= 3);

        // At a fixed rate from the open: a late ping never makes the next one early.
        int third = s.received.indexOf(s.requests(OpCase.PING).get(2));
        long sinceOpen = s.receivedAt.get(third) - s.receivedAt.get(0);
        assertTrue(sinceOpen >= TimeUnit.MILLISECONDS.toNanos(1_450), sinceOpen / 1_000_000 + " ms");
        assertEquals(Duration.ofMillis(500), options().pingIntervalFor(Duration.ofMillis(1_500)));
    }

    @Test
    void reconnectResubscribesEveryRoomAndHoldsTheUnackedMessage() throws Exception {
        RoomSession session = client.rooms().openSession(options());
        reply(session.subscribe("r", RoomMode.SYNC));
        reply(session.subscribe("l", RoomMode.ASYNC));
        String m1 = client.rooms().send("r", "m1", 0);
        ReceivedRoomMessage held = next();
        assertEquals(m1, held.messageId());

        server.session(0).fail(Status.UNAVAILABLE.withDescription("leader lost"));
        await().atMost(Duration.ofSeconds(10)).until(() -> server.sessions.size() == 2
                && server.session(1).requests(OpCase.SUBSCRIBE).size() == 2);
        List<RoomSubscribe> resubscribed = server.session(1).requests(OpCase.SUBSCRIBE).stream()
                .map(SessionRequest::getSubscribe).toList();
        assertEquals(RoomSubscribe.newBuilder().setRoom("r").setMode(SubscriptionMode.SYNC)
                .setHeldMessageId(m1).setSessionId(session.sessionId()).build(), resubscribed.get(0));
        assertEquals(RoomSubscribe.newBuilder().setRoom("l").setMode(SubscriptionMode.ASYNC)
                .setSessionId(session.sessionId()).build(), resubscribed.get(1));
        await().until(() -> events.contains("subscribed l as c-2: SUBSCRIBED"));
        int reopened = events.indexOf("opened c-2");
        assertEquals(List.of("opened c-2", "subscribed r as c-2: SUBSCRIBED", "subscribed l as c-2: SUBSCRIBED"),
                events.subList(reopened, reopened + 3));

        String m2 = client.rooms().send("r", "m2", 0);
        assertEquals(1, client.rooms().state("r").backlog(), "the held message keeps the gate closed");
        assertEquals(new RoomReply(RoomReply.ACKED, true), reply(session.ack(held)));
        assertEquals(m2, next().messageId());
        assertEquals(m1, server.session(1).requests(OpCase.ACK).get(0).getAck().getMessageId());
        assertEquals(Map.of("r", RoomMode.SYNC, "l", RoomMode.ASYNC), session.subscriptions());
    }

    @Test
    void everySubscribeOfASessionCarriesTheSameSessionIdAcrossReconnectsAndOtherSessionsHaveTheirOwn()
            throws Exception {
        RoomSession session = client.rooms().openSession(options());
        RoomSession other = client.rooms().openSession(options());
        String id = session.sessionId();
        assertEquals(36, id.length(), "a UUID: " + id);
        assertFalse(id.equals(other.sessionId()), "one per session object");
        reply(session.subscribe("r", RoomMode.SYNC));
        reply(other.subscribe("r", RoomMode.SYNC));
        server.sessions.get(0).fail(Status.UNAVAILABLE.withDescription("leader lost"));
        await().atMost(Duration.ofSeconds(10)).until(() -> server.sessions.size() == 3
                && server.session(2).requests(OpCase.SUBSCRIBE).size() == 1);
        List<String> sent = server.sessions.stream().flatMap(s -> s.requests(OpCase.SUBSCRIBE).stream())
                .map(f -> f.getSubscribe().getSessionId()).toList();
        String first = server.session(0).requests(OpCase.SUBSCRIBE).get(0).getSubscribe().getSessionId();
        String reconnected = server.session(2).requests(OpCase.SUBSCRIBE).get(0).getSubscribe().getSessionId();
        assertEquals(first, reconnected, "the same session id on the new stream, unlike the client id: " + sent);
        assertTrue(first.equals(id) || first.equals(other.sessionId()), sent.toString());
        assertEquals(2, sent.stream().distinct().count(), sent.toString());
    }

    @Test
    void anAckUnansweredWhenTheStreamFailsIsSentAgainOnTheNextOne() throws Exception {
        RoomSession session = client.rooms().openSession(options());
        reply(session.subscribe("r", RoomMode.SYNC));
        client.rooms().send("r", "m1", 0);
        ReceivedRoomMessage m1 = next();
        server.silentAcks = true;
        CompletableFuture<RoomReply> ack = session.ack(m1);
        await().until(() -> server.session(0).requests(OpCase.ACK).size() == 1);
        server.silentAcks = false;

        server.session(0).fail(Status.UNAVAILABLE);

        await().atMost(Duration.ofSeconds(10)).until(() -> server.sessions.size() == 2
                && server.session(1).requests(OpCase.ACK).size() == 1);
        List<OpCase> order = server.session(1).received.stream().map(SessionRequest::getOpCase).toList();
        assertEquals(List.of(OpCase.OPEN, OpCase.SUBSCRIBE, OpCase.ACK), order.subList(0, 3));
        assertEquals(m1.messageId(), server.session(1).requests(OpCase.SUBSCRIBE).get(0)
                .getSubscribe().getHeldMessageId());
        // The old stream's ack did release m1's gate there; the new session held m1 again, and
        // the resent ack releases it.
        assertEquals(RoomReply.ACKED, reply(ack).outcome());
    }

    @Test
    void aSessionLeavesAServerThatStopsAnsweringAndResubscribesElsewhere() throws Exception {
        try (FakeRooms second = new FakeRooms();
             HourglassClient two = HourglassClient.builder().servers(server.address(), second.address())
                     .channelFactory(FakeRooms.channels()).stallTimeout(Duration.ofMillis(200)).build()) {
            RoomSession session = two.rooms().openSession(options());
            reply(session.subscribe("r", RoomMode.SYNC));

            server.questionsHang = true; // paused: the stream stays open and silent
            await().atMost(Duration.ofSeconds(5)).until(() -> !second.sessions.isEmpty()
                    && second.session(0).requests(OpCase.SUBSCRIBE).size() == 1);
            assertEquals("r", second.session(0).requests(OpCase.SUBSCRIBE).get(0).getSubscribe().getRoom());
            await().atMost(Duration.ofSeconds(5)).until(() -> server.session(0).cancelled);
        }
    }

    @Test
    void followsTheLeaderHintOnReconnect() throws Exception {
        try (FakeRooms follower = new FakeRooms()) {
            follower.followerOf = server.address();
            try (HourglassClient viaFollower = HourglassClient.builder().servers(follower.address())
                    .channelFactory(FakeRooms.channels()).build()) {
                RoomSession session = viaFollower.rooms().openSession(options());
                reply(session.subscribe("r", RoomMode.SYNC));

                assertEquals(1, follower.sessions.size());
                assertEquals(1, server.sessions.size());
                assertEquals("c-1", session.clientId());
            }
        }
    }

    @Test
    void anEjectionIsReportedAndTheRoomIsNotResubscribed() throws Exception {
        RoomSession session = client.rooms().openSession(options());
        reply(session.subscribe("r", RoomMode.SYNC));
        reply(session.subscribe("s", RoomMode.SYNC));

        server.eject(server.session(0), "r", EjectReason.TIMEOUT);

        await().until(() -> events.contains(new RoomEjection("r", RoomEjection.Reason.TIMEOUT)));
        assertEquals(Map.of("s", RoomMode.SYNC), session.subscriptions());
        server.session(0).fail(Status.UNAVAILABLE);
        await().atMost(Duration.ofSeconds(10)).until(() -> server.sessions.size() == 2
                && server.session(1).requests(OpCase.SUBSCRIBE).size() == 1);
        assertEquals("s", server.session(1).requests(OpCase.SUBSCRIBE).get(0).getSubscribe().getRoom());
    }

    @Test
    void anUnknownClientAnswerStartsANewSession() {
        RoomSession session = client.rooms().openSession(options().withPingInterval(Duration.ofMillis(50)));
        session.subscribe("r", RoomMode.ASYNC);
        await().until(() -> !server.sessions.isEmpty() && server.session(0).requests(OpCase.PING).size() >= 1);

        server.forgetNextPing.set(true);
        await().atMost(Duration.ofSeconds(10)).until(() -> server.sessions.size() == 2);

        FakeRooms.FakeSession second = server.session(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> second.requests(OpCase.SUBSCRIBE).size() == 1);
        await().until(() -> server.session(0).cancelled);
        await().until(() -> session.clientId().equals("c-2"));
    }

    @Test
    void subscriptionsMadeBeforeTheStreamOpensAreSentWhenItDoes() throws Exception {
        server.holdOpens = true;
        RoomSession session = client.rooms().openSession(options());
        CompletableFuture<RoomReply> r = session.subscribe("r", RoomMode.SYNC);
        CompletableFuture<RoomReply> again = session.subscribe("r", RoomMode.ASYNC);
        await().until(() -> !server.sessions.isEmpty() && !server.session(0).received.isEmpty());
        assertFalse(session.isOpen());
        assertEquals(1, server.session(0).received.size(), "nothing but open before the server answers it");

        server.releaseOpens();

        assertEquals(RoomReply.SUBSCRIBED, reply(r).outcome());
        assertEquals(RoomReply.SUBSCRIBED, reply(again).outcome());
        assertEquals(Map.of("r", RoomMode.SYNC), session.subscriptions());
        assertEquals(new RoomReply(RoomReply.ALREADY_SUBSCRIBED, false), reply(session.subscribe("r", RoomMode.SYNC)));
    }

    @Test
    void aRefusedSubscribeFailsAndIsNotRestored() throws Exception {
        RoomSession session = client.rooms().openSession(options());

        ExecutionException e = assertThrows(ExecutionException.class,
                () -> reply(session.subscribe("bad", RoomMode.SYNC)));

        InvalidRequestException refused = assertInstanceOf(InvalidRequestException.class, e.getCause());
        assertEquals("room 'bad' is not allowed", refused.serverMessage());
        assertEquals(Map.of(), session.subscriptions());
        assertEquals(RoomReply.SUBSCRIBED, reply(session.subscribe("good", RoomMode.SYNC)).outcome());
        assertTrue(session.isOpen(), "a refused request leaves the stream open");
    }

    @Test
    void unsubscribeLeavesOneRoom() throws Exception {
        RoomSession session = client.rooms().openSession(options());
        reply(session.subscribe("a", RoomMode.SYNC));
        reply(session.subscribe("b", RoomMode.SYNC));

        assertEquals(new RoomReply(RoomReply.UNSUBSCRIBED, true), reply(session.unsubscribe("a")));
        assertEquals(new RoomReply(RoomReply.NOT_SUBSCRIBED, false), reply(session.unsubscribe("a")));

        assertEquals(Map.of("b", RoomMode.SYNC), session.subscriptions());
        assertEquals(1, client.rooms().state("b").members().size());
        assertEquals(0, client.rooms().state("a").members().size());
    }

    @Test
    void aRefusedOpenEndsTheSession() {
        server.openFailure = Status.INVALID_ARGUMENT.withDescription("clientTimeout must be at least 1s");
        RoomSession session = client.rooms().openSession(options());

        ExecutionException e = assertThrows(ExecutionException.class,
                () -> session.terminated().get(10, TimeUnit.SECONDS));
        assertInstanceOf(InvalidRequestException.class, e.getCause());
        assertTrue(session.opened().isCompletedExceptionally());
        assertEquals(1, server.sessions.size());
    }

    @Test
    void givesUpWhenNoServerOpensASession() {
        try (HourglassClient lonely = HourglassClient.builder().servers("nobody-here:1")
                .channelFactory(FakeRooms.channels()).build()) {
            RoomSession session = lonely.rooms().openSession(options().withGiveUpAfter(Duration.ofMillis(300)));

            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> session.terminated().get(10, TimeUnit.SECONDS));
            assertInstanceOf(UnavailableException.class, e.getCause());
        }
    }

    @Test
    void closeHalfClosesAndRefusesLaterRequests() throws Exception {
        RoomSession session = client.rooms().openSession(options());
        reply(session.subscribe("r", RoomMode.SYNC));

        session.close();

        assertTrue(server.session(0).halfClosed);
        assertFalse(server.session(0).cancelled);
        session.terminated().get(1, TimeUnit.SECONDS);
        assertFalse(session.isOpen());
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> session.ack("r", "m-1").get(1, TimeUnit.SECONDS));
        assertInstanceOf(HourglassClientException.class, e.getCause());
        assertEquals(0, client.rooms().state("r").members().size());
    }

    @Test
    void optionsAreValidated() {
        RoomSessionOptions o = RoomSessionOptions.of(m -> { });
        assertThrows(IllegalArgumentException.class, () -> o.withClientTimeout(Duration.ofMillis(999)));
        assertThrows(IllegalArgumentException.class, () -> o.withPingInterval(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> o.withGiveUpAfter(Duration.ofSeconds(-1)));
        assertEquals(Duration.ofSeconds(1), o.withClientTimeout(Duration.ofSeconds(1)).clientTimeout());
        RoomSession session = client.rooms().openSession(o);
        assertThrows(IllegalArgumentException.class, () -> session.subscribe(" ", RoomMode.SYNC));
    }
}
