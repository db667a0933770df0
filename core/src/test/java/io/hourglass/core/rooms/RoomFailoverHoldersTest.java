package io.hourglass.core.rooms;

import static io.hourglass.core.rooms.SubscriptionMode.ASYNC;
import static io.hourglass.core.rooms.SubscriptionMode.SYNC;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.rooms.RoomsFixture.TestClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * After a failover with a message in flight, the room resumes as soon as the holders of that message
 * are back: the release entry recorded their session ids (stable across reconnects, unlike client
 * ids), so the new leader knows when every one of them has resubscribed — holding the message, or not
 * because it had acked. Holders that do not come back are waited for until the client timeout
 * (T = 2 s here; the grace is 10 s), as before. A new engine over the same store stands for the new
 * leader; the clock only moves when a test moves it.
 */
@Timeout(30)
class RoomFailoverHoldersTest {
    private static final long T = RoomsFixture.T.toMillis();
    private static final long TICK = RoomsFixture.TICK.toMillis();

    @TempDir
    Path dir;
    private RoomsFixture f;
    private TestClient a;
    private TestClient b;
    private long failoverAtMs;

    @BeforeEach
    void open() {
        f = new RoomsFixture(dir);
    }

    @AfterEach
    void close() {
        f.close();
    }

    /** Sessions s-a and s-b both receive m1; m2 waits behind it. Returns m1's id. */
    private String m1ReleasedToAAndB() {
        a = f.join("A", "r", SYNC, "s-a");
        b = f.join("B", "r", SYNC, "s-b");
        f.sendAll("r", 0, "m1", "m2");
        assertEquals(List.of("m1"), b.payloads());
        return a.last().messageId();
    }

    private void failover() {
        f.failover();
        failoverAtMs = f.clock.millis();
    }

    /** The session {@code session} reconnected: a new client id, resubscribing with what it holds. */
    private TestClient back(String name, String session, String heldMessageId) {
        TestClient c = f.client(name).session(session);
        assertEquals(SubscribeOutcome.SUBSCRIBED, c.subscribe("r", SYNC, heldMessageId));
        return c;
    }

    /** Moves the clock one tick at a time, {@code alive} pinging, until {@code c} got a message; returns when. */
    private long untilDelivered(TestClient c, TestClient... alive) {
        long deadline = f.clock.millis() + 3 * T;
        while (c.deliveries.isEmpty() && f.clock.millis() < deadline) {
            f.advance(Duration.ofMillis(TICK));
            for (TestClient m : alive) {
                m.ping();
            }
        }
        assertFalse(c.deliveries.isEmpty(), "nothing delivered within 3T");
        return c.last().deliveredAtMs();
    }

    @Test
    void theReleaseRecordsTheSessionIdsOfItsHolders() {
        m1ReleasedToAAndB();
        assertEquals(List.of("s-a", "s-b"), new RoomStore(f.store).room("r").getHoldersList());
    }

    @Test
    void bothHoldersBackAndAckingReleaseTheNextMessageAtOnceNotAfterTheClientTimeout() {
        String m1 = m1ReleasedToAAndB();
        failover();
        TestClient a2 = back("A2", "s-a", m1);
        assertTrue(f.state("r").recovering(), "s-b may still hold m1");
        TestClient b2 = back("B2", "s-b", m1);
        assertFalse(f.state("r").recovering(), "every holder is back: the hold is over");
        assertEquals(AckOutcome.ACKED, a2.ack("r", m1));
        assertEquals(List.of(), a2.payloads(), "B2 still holds m1: lock-step as usual");
        assertEquals(AckOutcome.ACKED, b2.ack("r", m1));
        assertEquals(List.of("m2"), a2.payloads());
        assertEquals(List.of("m2"), b2.payloads());
        assertEquals(failoverAtMs, a2.last().deliveredAtMs(), "no time passed, let alone the client timeout");
        assertEquals(List.of("m1"), a.payloads(), "m1 was not delivered twice");
    }

    @Test
    void aHolderThatNeverComesBackIsWaitedForUntilTheClientTimeout() {
        String m1 = m1ReleasedToAAndB();
        failover();
        TestClient a2 = back("A2", "s-a", m1);
        a2.ack("r", m1);
        long deliveredAt = untilDelivered(a2, a2);
        assertEquals(List.of("m2"), a2.payloads());
        long waited = deliveredAt - failoverAtMs;
        assertTrue(waited >= T && waited <= T + TICK, "released " + waited + " ms after the failover");
    }

    @Test
    void subscribersThatWereNotHoldersDoNotEndTheHold() {
        String m1 = m1ReleasedToAAndB();
        failover();
        TestClient c = f.join("C", "r", SYNC, "s-c"); // a new session: it held nothing
        TestClient n = f.join("N", "r", ASYNC); // a listener without a session id
        TestClient a2 = back("A2", "s-a", m1);
        a2.ack("r", m1);
        f.advance(Duration.ofMillis(T - TICK));
        List.of(a2, c).forEach(TestClient::ping);
        assertTrue(f.state("r").recovering(), "s-b is not back");
        assertEquals(List.of(), c.payloads());
        assertEquals(List.of(), n.payloads());
        TestClient b2 = back("B2", "s-b", m1);
        assertFalse(f.state("r").recovering());
        long before = f.clock.millis();
        b2.ack("r", m1);
        assertEquals(List.of("m2"), c.payloads());
        assertEquals(List.of("m2"), n.payloads());
        assertEquals(before, c.last().deliveredAtMs(), "released on the last holder's ack, before the deadline");
    }

    @Test
    void aHolderThatResubscribesHoldingNothingBecauseItHadAckedCountsAsBack() {
        String m1 = m1ReleasedToAAndB();
        a.ack("r", m1);
        failover();
        TestClient b2 = back("B2", "s-b", m1);
        TestClient a2 = back("A2", "s-a", ""); // acked before the failover
        assertFalse(f.state("r").recovering());
        assertEquals(List.of(a2.id), f.state("r").ready(), "A2 is ready; B2 still owes its ack");
        assertEquals(List.of(), a2.payloads());
        b2.ack("r", m1);
        assertEquals(List.of("m2"), a2.payloads());
        assertEquals(failoverAtMs, a2.last().deliveredAtMs());
    }

    @Test
    void aMemberWithoutASessionIdMakesTheRoomWaitOutTheWholeHoldAsBefore() {
        a = f.join("A", "r", SYNC, "s-a");
        TestClient old = f.join("Old", "r", SYNC); // an older client library
        f.sendAll("r", 0, "m1", "m2");
        String m1 = a.last().messageId();
        assertEquals(List.of(), new RoomStore(f.store).room("r").getHoldersList(), "holders not known");
        failover();
        TestClient a2 = back("A2", "s-a", m1);
        TestClient old2 = f.client("Old2");
        old2.subscribe("r", SYNC, m1);
        a2.ack("r", m1);
        old2.ack("r", m1);
        assertTrue(f.state("r").recovering());
        assertEquals(List.of(), a2.payloads());
        long waited = untilDelivered(a2, a2, old2) - failoverAtMs;
        assertTrue(waited >= T && waited <= T + TICK, "released " + waited + " ms after the failover");
        assertEquals(List.of("m1"), old.payloads());
    }

    @Test
    void atLeastOnceTheRedeliveryGoesOutAsSoonAsEveryHolderIsBack() {
        f.await(f.engine.configure("r", new RoomSettings(DeliveryGuarantee.AT_LEAST_ONCE, Duration.ZERO)));
        String m1 = m1ReleasedToAAndB();
        failover();
        TestClient a2 = back("A2", "s-a", m1);
        assertEquals(List.of(), a2.payloads(), "s-b is not back");
        TestClient b2 = back("B2", "s-b", m1);
        for (TestClient c : List.of(a2, b2)) {
            assertEquals(List.of("m1"), c.payloads());
            assertTrue(c.last().redelivered());
            assertEquals(failoverAtMs, c.last().deliveredAtMs());
        }
        a2.ackLast();
        b2.ackLast();
        assertEquals(List.of("m1", "m2"), a2.payloads());
    }

    @Test
    void theHoldersSurviveASecondFailoverBeforeAnythingIsReleased() {
        String m1 = m1ReleasedToAAndB();
        failover();
        back("A2", "s-a", m1);
        failover();
        TestClient a3 = back("A3", "s-a", m1);
        TestClient b3 = back("B3", "s-b", m1);
        assertFalse(f.state("r").recovering(), "the third leader read the same holders");
        a3.ack("r", m1);
        b3.ack("r", m1);
        assertEquals(List.of("m2"), a3.payloads());
        assertEquals(failoverAtMs, a3.last().deliveredAtMs());
    }
}
