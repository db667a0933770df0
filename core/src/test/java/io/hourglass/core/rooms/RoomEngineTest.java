package io.hourglass.core.rooms;

import static io.hourglass.core.rooms.SubscriptionMode.ASYNC;
import static io.hourglass.core.rooms.SubscriptionMode.SYNC;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.rooms.RoomsFixture.TestClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The engine's API beyond the ROOMS.md scenarios: outcomes, sessions, leadership, limits, retries. */
@Timeout(30)
class RoomEngineTest {
    @TempDir
    Path dir;
    private RoomsFixture f;

    @BeforeEach
    void open() {
        f = new RoomsFixture(dir);
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void acksThatChangeNothingSayWhy() {
        TestClient a = f.join("A", "r", SYNC);
        TestClient n = f.join("N", "r", ASYNC);
        List<String> ids = f.sendAll("r", 0, "m1", "m2", "m3");
        assertEquals(AckOutcome.NOT_IN_FLIGHT, a.ack("r", ids.get(1)), "pending, not released yet");
        assertEquals(AckOutcome.UNKNOWN_MESSAGE, a.ack("r", "garbage"));
        assertEquals(AckOutcome.UNKNOWN_MESSAGE, a.ack("r", RoomKey.of("other", 0, 1, 0).id()));
        assertEquals(AckOutcome.NOT_MEMBER, n.ack("r", ids.get(0)), "listeners never ack");
        assertEquals(AckOutcome.NOT_MEMBER, a.ack("elsewhere", ids.get(0)));
        assertEquals(AckOutcome.UNKNOWN_CLIENT, f.await(f.engine.ack(ClientId.random(), "r", ids.get(0))));
        assertEquals(AckOutcome.ACKED, a.ack("r", ids.get(0)));
        assertEquals(AckOutcome.NOT_IN_FLIGHT, a.ack("r", ids.get(0)), "stale: m2 is in flight now");
        assertEquals(List.of("m1", "m2"), a.payloads());
        assertTrue(f.engine.counters().ignoredAcks.sum() >= 6);
    }

    @Test
    void subscribingTwiceChangesNothingAndUnsubscribingLeavesOtherRoomsAlone() {
        TestClient a = f.join("A", "x", SYNC).autoAck();
        assertEquals(SubscribeOutcome.ALREADY_SUBSCRIBED, a.subscribe("x", ASYNC));
        assertEquals(SubscribeOutcome.SUBSCRIBED, a.subscribe("y", SYNC));
        assertEquals(UnsubscribeOutcome.UNSUBSCRIBED, a.unsubscribe("x"));
        assertEquals(UnsubscribeOutcome.NOT_SUBSCRIBED, a.unsubscribe("x"));
        f.send("y", 0, "still here");
        assertEquals(List.of("still here"), a.payloads());
        assertEquals(SubscribeOutcome.UNKNOWN_CLIENT, f.await(f.engine.subscribe(ClientId.random(), "x", SYNC)));
    }

    @Test
    void disconnectingReleasesTheRoomAtOnceWithoutEvents() {
        TestClient a = f.join("A", "r", SYNC);
        TestClient b = f.join("B", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2");
        a.ackLast();
        f.engine.disconnect(b.id);
        f.run();
        assertEquals(List.of("m1", "m2"), a.payloads());
        assertEquals(List.of(), b.events);
        assertEquals(PingOutcome.UNKNOWN_CLIENT, b.ping());
    }

    @Test
    void eachSessionMayChooseItsOwnHeartbeatTimeout() {
        TestClient patient = f.client("P", Duration.ofSeconds(5));
        patient.subscribe("r", SYNC);
        TestClient quick = f.join("Q", "r", SYNC);
        f.advance(Duration.ofSeconds(3));
        assertEquals(List.of("ejected r TIMEOUT"), quick.events);
        assertEquals(List.of(), patient.events);
        f.advance(Duration.ofSeconds(3));
        assertEquals(List.of("ejected r TIMEOUT"), patient.events);
        assertThrows(InvalidRequestException.class, () -> f.engine.connect(patient, Duration.ofMillis(999)));
    }

    @Test
    void sendingIsAHeartbeatAndNamesTheProducer() {
        TestClient a = f.join("A", "r", SYNC).autoAck();
        for (int i = 0; i < 6; i++) {
            f.advance(Duration.ofMillis(500));
            f.await(f.engine.send("r", 0, ByteString.copyFromUtf8("m" + i), a.id));
        }
        assertEquals(List.of(), a.events, "never silent: it kept sending");
        assertEquals(a.id.toString(), a.last().producer());
    }

    @Test
    void anAckTimeoutEvictsAMemberThatHoldsTheMessageTooLong() {
        f.await(f.engine.configure("r", new RoomSettings(DeliveryGuarantee.AT_MOST_ONCE, Duration.ofSeconds(1))));
        TestClient a = f.join("A", "r", SYNC).autoAck();
        TestClient b = f.join("B", "r", SYNC);
        List<String> ejected = new ArrayList<>();
        f.engine.addObserver((room, client, reason) -> ejected.add(room + " " + client + " " + reason));
        f.sendAll("r", 0, "m1", "m2");
        for (int i = 0; i < 3; i++) {
            f.advance(Duration.ofMillis(500));
            b.ping();
            a.ping();
        }
        assertEquals(List.of("ejected r ACK_TIMEOUT"), b.events);
        assertEquals(List.of("r " + b.id + " ACK_TIMEOUT"), ejected);
        assertNull(b.closedReason, "alive: it keeps its id");
        assertEquals(List.of("m1", "m2"), a.payloads());
        assertThrows(InvalidRequestException.class,
                () -> new RoomSettings(DeliveryGuarantee.AT_MOST_ONCE, Duration.ofMillis(500)));
    }

    @Test
    void aFailedReleaseIsProposedAgainAndDeliveredOnce() {
        TestClient a = f.join("A", "r", SYNC);
        var sent = f.engine.send("r", 0, ByteString.copyFromUtf8("m1"), null);
        assertTrue(sent.isDone());
        f.replicator.failNext(1);
        f.run();
        assertEquals(List.of(), a.payloads());
        assertEquals(1, f.engine.counters().releaseFailures.sum());
        f.advance(RoomsFixture.TICK);
        assertEquals(List.of("m1"), a.payloads());
        f.advance(RoomsFixture.TICK);
        assertEquals(List.of("m1"), a.payloads());
    }

    @Test
    void metricsCountRoomsWithBacklogAndListExactlyTheTopN() {
        for (String room : List.of("a", "b", "c")) {
            f.join("M" + room, room, SYNC);
        }
        f.sendAll("a", 0, "1", "2");
        f.sendAll("b", 0, "1", "2", "3", "4");
        f.sendAll("c", 0, "1", "2", "3");
        RoomsOverview top2 = f.await(f.engine.metrics(2));
        assertEquals(3, top2.roomsWithBacklog());
        assertEquals(List.of(new RoomsOverview.RoomBacklog("b", 3), new RoomsOverview.RoomBacklog("c", 2)), top2.top());
        assertEquals(3, f.await(f.engine.metrics(10)).top().size());
        assertEquals(0, f.await(f.engine.metrics(0)).top().size());
    }

    @Test
    void losingLeadershipEndsEverySessionAndRefusesRequests() {
        TestClient a = f.join("A", "r", SYNC);
        f.engine.setLeading(false, f.replicator.term());
        f.run();
        assertNotNull(a.closedReason);
        CompletionException e = assertThrows(CompletionException.class, () -> f.await(f.engine.ping(a.id)));
        assertInstanceOf(NotLeaderException.class, e.getCause());
        assertInstanceOf(NotLeaderException.class, assertThrows(CompletionException.class,
                () -> f.engine.send("r", 0, ByteString.EMPTY, null).join()).getCause());
    }

    @Test
    void malformedRequestsAreRefusedAtOnce() {
        assertThrows(InvalidRequestException.class, () -> f.engine.send("", 0, ByteString.EMPTY, null));
        assertThrows(InvalidRequestException.class, () -> f.engine.send("bad name", 0, ByteString.EMPTY, null));
        assertThrows(InvalidRequestException.class, () -> f.engine.send("r", List.of(), null));
        assertThrows(InvalidRequestException.class,
                () -> f.engine.send("r", 0, ByteString.copyFrom(new byte[(1 << 20) + 1]), null));
        assertThrows(InvalidRequestException.class, () -> f.engine.peek("r", -1, 10));
        assertThrows(InvalidRequestException.class, () -> f.engine.metrics(-1));
    }

    @Test
    void heldMessageIdLetsAReconnectingMemberKeepTheGateClosed() {
        TestClient a = f.join("A", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2");
        String m1 = a.last().messageId();
        TestClient again = f.client("A'"); // reconnected before its old stream was noticed dead
        assertEquals(SubscribeOutcome.SUBSCRIBED, f.await(f.engine.subscribe(again.id, "r", SYNC, m1)));
        f.engine.disconnect(a.id);
        f.run();
        assertEquals(List.of(), again.payloads(), "it holds m1; m2 waits for its ack");
        assertEquals(AckOutcome.ACKED, again.ack("r", m1));
        assertEquals(List.of("m2"), again.payloads());
    }
}
