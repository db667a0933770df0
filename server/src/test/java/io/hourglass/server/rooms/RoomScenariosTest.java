package io.hourglass.server.rooms;

import static io.hourglass.api.v1.SubscriptionMode.ASYNC;
import static io.hourglass.api.v1.SubscriptionMode.SYNC;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.hourglass.api.v1.EjectReason;
import io.hourglass.api.v1.RoomDelivery;
import io.hourglass.api.v1.RoomMember;
import io.hourglass.api.v1.RoomSendOutOfBandResponse;
import io.hourglass.api.v1.RoomState;
import io.hourglass.api.v1.SessionReply;
import io.hourglass.core.rooms.ClientId;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * ROOMS.md scenarios 1–17, end to end over gRPC on a real node: raw Session streams for the members
 * (A, B, C: SYNC; N: ASYNC) and the unary calls for senders and queries. T = 2 s where a scenario
 * depends on it (11, 12), set per session; elsewhere sessions keep the server's 30 s. Each test has
 * its own room, named after it.
 *
 * <p>"Nothing more arrives" is checked after a ping round trip: the server answers a ping after
 * everything it produced for that client before, so a delivery already on its way would be seen.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RoomScenariosTest {
    private static final long T_MS = 2_000;
    /** rooms.housekeepingInterval's default: an eviction is at most this late. */
    private static final long TICK_MS = 250;
    /** Commit and fan-out of a release on a busy machine, on top of the spec's bound. */
    private static final long SLACK_MS = 1_500;

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
        node = TestNode.start(dir);
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

    private SessionClient client(String name) {
        return client(name, 0);
    }

    private SessionClient client(String name, long timeoutMs) {
        SessionClient c = SessionClient.open(channel, name, timeoutMs);
        clients.add(c);
        return c;
    }

    /** Round trips that prove nothing else is on its way to these clients. */
    private static void settle(SessionClient... cs) {
        for (SessionClient c : cs) {
            assertEquals("OK", c.ping().getOutcome());
        }
    }

    private static List<String> ids(List<RoomMember> members) {
        return members.stream().map(RoomMember::getClientId).toList();
    }

    @Test
    void s01_anAutoAckingMemberReceivesExactlyTheMessageWithAnAckHandle() {
        SessionClient a = client("A").autoAck().join(room, SYNC);
        String id = api.send(room, "x");
        a.awaitPayloads("x");
        settle(a);
        a.awaitPayloads("x");
        RoomDelivery d = a.last();
        assertEquals(id, d.getMessageId());
        assertEquals(room, d.getRoom());
        assertTrue(d.getAckable(), "a sync member gets an ack handle");
        assertFalse(d.getOob());
        assertFalse(d.getRedelivered());
    }

    @Test
    void s02_fiveSendsOfEqualPriorityArriveInSendOrderAndNoSixth() {
        SessionClient a = client("A").autoAck().join(room, SYNC);
        for (int i = 1; i <= 5; i++) {
            api.send(room, 7, "m" + i);
        }
        a.awaitPayloads("m1", "m2", "m3", "m4", "m5");
        await().atMost(SessionClient.WAIT).until(() -> api.state(room).getMembers(0).getReady());
        settle(a);
        a.awaitPayloads("m1", "m2", "m3", "m4", "m5");
        assertEquals(0, api.state(room).getBacklog());
    }

    @Test
    void s03_afterUnsubscribingNothingMoreArrivesAndTheBacklogIsEmpty() {
        SessionClient a = client("A").autoAck().join(room, SYNC);
        api.send(room, "m1");
        a.awaitPayloads("m1");
        SessionReply left = a.unsubscribe(room);
        assertEquals("UNSUBSCRIBED", left.getOutcome());
        assertTrue(left.getOk());
        assertEquals(EjectReason.UNSUBSCRIBED, a.awaitEjected(room).getReason());
        api.send(room, "m2");
        settle(a);
        a.awaitPayloads("m1");
        assertEquals(0, api.state(room).getBacklog());
        assertEquals(List.of(), api.peek(room, 0, 10));
    }

    @Test
    void s04_twoManualMembersGateTheRoomUntilBothHaveAcked() {
        SessionClient a = client("A").join(room, SYNC);
        SessionClient b = client("B").join(room, SYNC);
        api.send(room, "m1");
        api.send(room, "m2");
        api.send(room, "m3");
        a.awaitPayloads("m1");
        b.awaitPayloads("m1");
        a.ackLast();
        settle(a, b);
        a.awaitPayloads("m1");
        b.awaitPayloads("m1");
        assertEquals(2, api.state(room).getBacklog(), "m2 withheld until B acks");
        b.ackLast();
        a.awaitPayloads("m1", "m2");
        b.awaitPayloads("m1", "m2");
    }

    @Test
    void s05_pendingMessagesAreReleasedByPriorityOneAckAtATime() {
        SessionClient a = client("A").join(room, SYNC);
        api.send(room, 0, "m0");
        a.awaitPayloads("m0");
        api.send(room, 5, "p5");
        api.send(room, 1, "p1");
        api.send(room, 3, "p3");
        api.send(room, -1, "p-1");
        List<String> expected = new ArrayList<>(List.of("m0"));
        for (String next : List.of("p-1", "p1", "p3", "p5")) {
            a.ackLast();
            expected.add(next);
            a.awaitPayloads(expected.toArray(String[]::new));
        }
        assertEquals(-1, a.deliveries().get(1).getPriority());
    }

    @Test
    void s06_aMoreUrgentMessageDoesNotOvertakeTheOneInFlight() {
        SessionClient a = client("A").join(room, SYNC);
        api.send(room, 5, "p5");
        a.awaitPayloads("p5");
        api.send(room, 0, "p0");
        settle(a);
        a.awaitPayloads("p5");
        a.ackLast();
        a.awaitPayloads("p5", "p0");
    }

    @Test
    void s07_outOfBandReachesEveryoneAtOnceWithoutAnAckHandleAndPassesTheGate() {
        SessionClient a = client("A").join(room, SYNC);
        SessionClient b = client("B").join(room, SYNC);
        SessionClient n = client("N").join(room, ASYNC);
        api.send(room, "m1");
        api.send(room, "m2");
        for (SessionClient c : List.of(a, b, n)) {
            c.awaitPayloads("m1");
        }
        a.ackLast();
        RoomSendOutOfBandResponse oob = api.sendOutOfBand(room, "o1");
        assertEquals(3, oob.getRecipients());
        for (SessionClient c : List.of(a, b, n)) {
            c.awaitPayloads("m1", "o1");
            RoomDelivery o1 = c.last();
            assertTrue(o1.getOob(), c.name);
            assertFalse(o1.getAckable(), c.name + " gets no ack handle for out-of-band");
            assertEquals(oob.getMessageId(), o1.getMessageId());
        }
        assertFalse(n.deliveries().get(0).getAckable(), "a listener never gets an ack handle");
        settle(a, b, n);
        assertEquals(1, api.state(room).getBacklog(), "m2 still withheld: B has not acked m1");
        assertEquals("OUT_OF_BAND", b.ack(room, oob.getMessageId()).getOutcome());
        b.ack(room, a.deliveries().get(0).getMessageId());
        for (SessionClient c : List.of(a, b, n)) {
            c.awaitPayloads("m1", "o1", "m2");
        }
    }

    @Test
    void s08_aListenerGetsEachMessageTogetherWithTheSyncMember() {
        SessionClient a = client("A").join(room, SYNC);
        SessionClient n = client("N").join(room, ASYNC);
        api.send(room, "m1");
        api.send(room, "m2");
        a.awaitPayloads("m1");
        n.awaitPayloads("m1");
        settle(n);
        n.awaitPayloads("m1");
        a.ackLast();
        a.awaitPayloads("m1", "m2");
        n.awaitPayloads("m1", "m2");
    }

    @Test
    void s09_listenersAloneReceiveEverythingAtOnceAndTheRoomKeepsNoBacklog() {
        SessionClient n = client("N").join(room, ASYNC);
        for (String[] m : new String[][] {{"3", "p3"}, {"1", "p1"}, {"2", "p2"}}) {
            api.send(room, Integer.parseInt(m[0]), m[1]);
            assertEquals(0, api.state(room).getBacklog());
        }
        n.awaitPayloads("p3", "p1", "p2");
        assertTrue(n.deliveries().stream().noneMatch(RoomDelivery::getAckable));
    }

    @Test
    void s10_messagesSentToAnEmptyRoomAreDroppedSoALateSubscriberReceivesNothing() {
        api.send(room, "m1");
        api.send(room, "m2");
        api.send(room, "m3");
        SessionClient a = client("A").join(room, SYNC);
        settle(a);
        assertEquals(List.of(), a.payloads());
        assertEquals(List.of(), api.peek(room, 0, 10));
        assertEquals(0, api.state(room).getBacklog());
    }

    @Test
    void s11_aSilentMemberIsEvictedNotBeforeTheTimeoutAndAtMostATickLater() {
        List<String> observed = new CopyOnWriteArrayList<>();
        node.node().rooms().addObserver((r, client, reason) -> observed.add(r + " " + client + " " + reason));
        SessionClient a = client("A", T_MS);
        a.startPinging(pingers, Duration.ofMillis(500));
        a.join(room, SYNC);
        SessionClient b = client("B", T_MS).join(room, SYNC);
        api.send(room, "m1");
        api.send(room, "m2");
        a.awaitPayloads("m1");
        b.awaitPayloads("m1");
        a.ackLast();
        long bLastSeen = api.state(room).getMembersList().stream()
                .filter(m -> m.getClientId().equals(b.clientId())).findFirst().orElseThrow().getLastSeenMs();

        RoomDelivery m2 = a.awaitDelivery("m2");
        long releasedAfter = m2.getDeliveredAtMs() - bLastSeen;
        assertTrue(releasedAfter >= T_MS, "m2 released " + releasedAfter + " ms after B was last seen, before T");
        assertTrue(releasedAfter <= T_MS + TICK_MS + SLACK_MS, "m2 released only " + releasedAfter + " ms after");
        assertEquals(EjectReason.TIMEOUT, b.awaitEjected(room).getReason());
        assertEquals(List.of("m1"), b.payloads());
        Status end = b.awaitEnd();
        assertEquals(Status.Code.UNAVAILABLE, end.getCode(), "evicted from its only room: the session ends");
        assertTrue(end.getDescription().contains("evicted"), end::toString);
        RoomState s = api.state(room);
        assertEquals(List.of(a.clientId()), ids(s.getMembersList()));
        assertTrue(observed.contains(room + " " + ClientId.parse(b.clientId()) + " TIMEOUT"), observed::toString);
    }

    @Test
    void s12_aMemberThatPingsButNeverAcksIsNotEvictedAndBlocksTheRoom() {
        SessionClient a = client("A", T_MS);
        a.startPinging(pingers, Duration.ofMillis(500));
        a.join(room, SYNC);
        api.send(room, "m1");
        api.send(room, "m2");
        a.awaitPayloads("m1");
        await("no eviction for 3T").during(Duration.ofMillis(3 * T_MS)).atMost(Duration.ofMillis(3 * T_MS + 5_000))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    RoomState s = api.state(room);
                    return s.getMembersCount() == 1 && s.getBacklog() == 1 && a.ejections().isEmpty() && !a.ended();
                });
        a.awaitPayloads("m1");
        assertEquals(List.of("m2"), api.peek(room, 0, 10));
    }

    @Test
    void s13_aMemberLeavingWithoutAckingReleasesTheNextToTheOthersAtOnce() {
        SessionClient a = client("A").join(room, SYNC);
        SessionClient b = client("B").join(room, SYNC);
        api.send(room, "m1");
        api.send(room, "m2");
        a.awaitPayloads("m1");
        b.awaitPayloads("m1");
        a.ackLast();
        assertEquals("UNSUBSCRIBED", b.unsubscribe(room).getOutcome());
        a.awaitPayloads("m1", "m2");
        settle(b);
        assertEquals(List.of("m1"), b.payloads());
    }

    @Test
    void s14_aNewcomerDoesNotGetTheMessageInFlightButGetsTheNext() {
        SessionClient a = client("A").join(room, SYNC);
        api.send(room, "m1");
        api.send(room, "m2");
        a.awaitPayloads("m1");
        SessionClient c = client("C").join(room, SYNC);
        settle(c);
        assertEquals(List.of(), c.payloads());
        RoomState s = api.state(room);
        assertEquals(List.of(c.clientId()), s.getMembersList().stream().filter(RoomMember::getReady)
                .map(RoomMember::getClientId).toList(), "the newcomer joins ready");
        a.ackLast();
        a.awaitPayloads("m1", "m2");
        c.awaitPayloads("m2");
    }

    @Test
    void s15_duplicateAndForeignAcksChangeNothing() {
        SessionClient a = client("A").join(room, SYNC);
        SessionClient b = client("B").join(room, SYNC);
        SessionClient x = client("X");
        api.send(room, "m1");
        api.send(room, "m2");
        String m1 = a.awaitDelivery("m1").getMessageId();
        b.awaitPayloads("m1");
        assertEquals("ACKED", a.ack(room, m1).getOutcome());
        SessionReply again = a.ack(room, m1);
        assertEquals("DUPLICATE", again.getOutcome());
        assertFalse(again.getOk());
        SessionReply foreign = x.ack(room, m1);
        assertEquals("NOT_MEMBER", foreign.getOutcome());
        assertFalse(foreign.getOk());
        settle(a, b);
        assertEquals(List.of("m1"), a.payloads());
        RoomState s = api.state(room);
        assertEquals(m1, s.getInFlight());
        assertEquals(1, s.getBacklog());
        assertEquals(List.of(a.clientId()), s.getMembersList().stream().filter(RoomMember::getReady)
                .map(RoomMember::getClientId).toList());
        b.ack(room, m1);
        a.awaitPayloads("m1", "m2");
    }

    @Test
    void s16_aBlockedRoomDoesNotHoldUpAnother() {
        String x = room + "X";
        String y = room + "Y";
        SessionClient b = client("B").join(x, SYNC);
        SessionClient a = client("A").autoAck().join(y, SYNC);
        api.send(x, "x1");
        api.send(x, "x2");
        b.awaitPayloads("x1");
        String[] ys = IntStream.rangeClosed(1, 5).mapToObj(i -> "y" + i).toArray(String[]::new);
        for (String m : ys) {
            api.send(y, m);
        }
        a.awaitPayloads(ys);
        assertEquals(1, api.state(x).getBacklog(), "room X still waits for B");
    }

    @Test
    void s17_peekAndStateShowThePendingMessagesInReleaseOrder() {
        SessionClient a = client("A").join(room, SYNC);
        String m1 = api.send(room, 0, "m1");
        a.awaitPayloads("m1");
        api.send(room, 3, "m2");
        api.send(room, 1, "m3");
        assertEquals(List.of("m3", "m2"), api.peek(room, 0, 10));
        assertEquals(List.of("m2"), api.peek(room, 1, 1));
        assertEquals(List.of(), api.peek(room, 5, 10));
        assertEquals(List.of("m3", "m2"), api.peek(room, 0, 0), "limit 0 means the default page");
        RoomState s = api.state(room);
        assertEquals(room, s.getRoom());
        assertEquals(2, s.getBacklog());
        assertEquals(List.of(a.clientId()), ids(s.getMembersList()));
        assertFalse(s.getMembers(0).getReady(), "R = ∅");
        assertTrue(s.getMembers(0).getLastSeenMs() > 0);
        assertEquals(m1, s.getInFlight());
        assertEquals(0, s.getListeners());
        assertFalse(s.getAtLeastOnce());
    }
}
