package io.hourglass.core.rooms;

import static io.hourglass.core.rooms.SubscriptionMode.ASYNC;
import static io.hourglass.core.rooms.SubscriptionMode.SYNC;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.rooms.RoomsFixture.TestClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** ROOMS.md scenarios 10–17: joining, leaving, eviction, acks that change nothing, peek and state. T = 2s. */
@Timeout(30)
class MembershipScenariosTest {
    private static final Duration STEP = Duration.ofMillis(100);
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
    void s10_messagesSentToAnEmptyRoomAreGoneBeforeAnyoneJoins() {
        f.sendAll("r", 0, "m1", "m2", "m3");
        TestClient a = f.join("A", "r", SYNC);
        f.advance(RoomsFixture.TICK.multipliedBy(2));
        assertEquals(List.of(), a.payloads());
        assertEquals(List.of(), f.peek("r", 0, 10));
        assertEquals(0, f.state("r").backlog());
    }

    @Test
    void s11_aSilentMemberIsEvictedNotBeforeTheTimeoutAndAtMostATickAfterIt() {
        TestClient a = f.join("A", "r", SYNC).autoAck();
        TestClient b = f.join("B", "r", SYNC);
        long t0 = f.clock.millis(); // B's last sign of life
        f.sendAll("r", 0, "m1", "m2");
        assertEquals(List.of("m1"), b.fresh());
        while (f.clock.millis() < t0 + RoomsFixture.T.toMillis() - STEP.toMillis()) {
            f.advance(STEP);
            a.ping();
        }
        f.advance(Duration.ofMillis(t0 + RoomsFixture.T.toMillis() - 1 - f.clock.millis()));
        assertEquals(List.of("m1"), a.payloads(), "not released before t0+T");
        assertEquals(List.of(), b.events);
        while (f.clock.millis() < t0 + RoomsFixture.T.toMillis() + RoomsFixture.TICK.toMillis()) {
            f.advance(STEP);
            a.ping();
        }
        assertEquals(List.of("m1", "m2"), a.payloads(), "released by t0+T+tick");
        assertEquals(List.of("ejected r TIMEOUT"), b.events);
        assertNotNull(b.closedReason, "evicted from its only room: the session ends");
        assertEquals(PingOutcome.UNKNOWN_CLIENT, b.ping(), "a ping does not revive it");
        assertEquals(SubscribeOutcome.UNKNOWN_CLIENT, b.subscribe("r", SYNC), "it needs a new id");
        RoomSnapshot state = f.state("r");
        assertEquals(List.of(a.id), state.members().stream().map(RoomSnapshot.Member::clientId).toList());
    }

    @Test
    void aHeartbeatTimeoutRetiresTheClientInEveryRoomListenersIncluded() {
        TestClient b = f.join("B", "r", SYNC);
        assertEquals(SubscribeOutcome.SUBSCRIBED, b.subscribe("news", ASYNC));
        f.advance(RoomsFixture.T.plus(RoomsFixture.TICK).plus(STEP));
        assertNotNull(b.closedReason, "the session ends although B still listened to another room");
        assertEquals(PingOutcome.UNKNOWN_CLIENT, b.ping());
        assertEquals(SubscribeOutcome.UNKNOWN_CLIENT, b.subscribe("r", SYNC), "it needs a new id");
        assertEquals(0, f.state("news").listeners().size());
    }

    @Test
    void s12_aMemberThatPingsButNeverAcksBlocksTheRoomWithoutBeingEvicted() {
        TestClient a = f.join("A", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2");
        for (int i = 0; i < 12; i++) {
            f.advance(Duration.ofMillis(500));
            assertEquals(PingOutcome.OK, a.ping());
        }
        assertEquals(List.of("m1"), a.payloads());
        assertEquals(List.of(), a.events);
        assertNull(a.closedReason);
        assertEquals(1, f.state("r").backlog());
        assertEquals(List.of("m2"), f.peek("r", 0, 10));
    }

    @Test
    void s13_whenTheLastUnackedMemberLeavesTheNextMessageGoesAtOnce() {
        TestClient a = f.join("A", "r", SYNC);
        TestClient b = f.join("B", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2");
        a.ackLast();
        assertEquals(List.of("m1"), a.fresh());
        b.unsubscribe("r");
        assertEquals(List.of("m2"), a.fresh());
        assertEquals(List.of("m1"), b.payloads());
    }

    @Test
    void s14_aNewcomerNeitherReceivesNorBlocksTheMessageInFlight() {
        TestClient a = f.join("A", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2");
        TestClient c = f.join("C", "r", SYNC);
        assertEquals(List.of(), c.payloads());
        assertEquals(AckOutcome.DUPLICATE, c.ack("r", a.last().messageId()), "it is ready already");
        a.ackLast();
        assertEquals(List.of("m1", "m2"), a.payloads());
        assertEquals(List.of("m2"), c.payloads());
    }

    @Test
    void s15_duplicateAndForeignAcksChangeNothing() {
        TestClient a = f.join("A", "r", SYNC);
        TestClient b = f.join("B", "r", SYNC);
        TestClient stranger = f.client("S");
        f.sendAll("r", 0, "m1", "m2");
        String m1 = a.last().messageId();
        assertEquals(AckOutcome.ACKED, a.ack("r", m1));
        assertEquals(AckOutcome.DUPLICATE, a.ack("r", m1));
        assertEquals(AckOutcome.NOT_MEMBER, stranger.ack("r", m1));
        assertEquals(List.of("m1"), a.payloads());
        assertEquals(List.of(a.id), f.state("r").ready());
        assertEquals(AckOutcome.ACKED, b.ack("r", m1));
        assertEquals(List.of("m1", "m2"), a.payloads());
    }

    @Test
    void s16_aBlockedRoomDoesNotHoldUpAnotherRoom() {
        TestClient b = f.join("B", "x", SYNC);
        TestClient a = f.join("A", "y", SYNC).autoAck();
        assertEquals(SubscribeOutcome.SUBSCRIBED, a.subscribe("x", SYNC));
        f.sendAll("x", 0, "x1", "x2");
        f.sendAll("y", 0, "y1", "y2", "y3");
        assertEquals(List.of("x1"), b.payloads());
        assertEquals(List.of("x1", "y1", "y2", "y3"), a.payloads());
    }

    @Test
    void s17_peekShowsPendingInReleaseOrderAndStateShowsTheGate() {
        TestClient a = f.join("A", "r", SYNC);
        String m1 = f.send("r", 0, "m1");
        f.send("r", 3, "m2");
        f.send("r", 1, "m3");
        assertEquals(List.of("m3", "m2"), f.peek("r", 0, 10));
        assertEquals(List.of("m2"), f.peek("r", 1, 1));
        assertEquals(List.of(), f.peek("r", 5, 10));
        RoomSnapshot state = f.state("r");
        assertEquals(2, state.backlog());
        assertEquals(1, state.members().size());
        assertEquals(a.id, state.members().get(0).clientId());
        assertTrue(state.ready().isEmpty());
        assertEquals(Optional.of(m1), state.inFlightId());
        assertEquals(RoomSettings.DEFAULT, state.settings());
    }
}
