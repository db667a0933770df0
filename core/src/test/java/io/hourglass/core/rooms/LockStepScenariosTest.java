package io.hourglass.core.rooms;

import static io.hourglass.core.rooms.SubscriptionMode.ASYNC;
import static io.hourglass.core.rooms.SubscriptionMode.SYNC;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.rooms.RoomsFixture.TestClient;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** ROOMS.md scenarios 1–9: the gate, priorities, out-of-band and async listeners. A, B sync; N async. */
@Timeout(30)
class LockStepScenariosTest {
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
    void s01_aSyncMemberReceivesExactlyTheMessageWithAnAckHandle() {
        TestClient a = f.join("A", "r", SYNC).autoAck();
        String id = f.send("r", 0, "x");
        assertEquals(List.of("x"), a.payloads());
        RoomDelivery d = a.last();
        assertTrue(d.ackable());
        assertFalse(d.outOfBand());
        assertEquals(id, d.messageId());
        assertEquals("r", d.room());
    }

    @Test
    void s02_fiveSendsOfEqualPriorityArriveInSendOrderAndNoSixth() {
        TestClient a = f.join("A", "r", SYNC).autoAck();
        f.sendAll("r", 7, "m1", "m2", "m3", "m4", "m5");
        f.advance(RoomsFixture.T);
        assertEquals(List.of("m1", "m2", "m3", "m4", "m5"), a.payloads());
    }

    @Test
    void s02_identicalPayloadsAreTwoMessages() {
        TestClient a = f.join("A", "r", SYNC).autoAck();
        f.sendAll("r", 0, "same", "same");
        assertEquals(List.of("same", "same"), a.payloads());
        assertEquals(2, a.deliveries.stream().map(RoomDelivery::messageId).distinct().count());
    }

    @Test
    void s03_afterUnsubscribingAClientGetsNothingMoreAndNoBacklogIsLeft() {
        TestClient a = f.join("A", "r", SYNC).autoAck();
        f.send("r", 0, "m1");
        assertEquals(UnsubscribeOutcome.UNSUBSCRIBED, a.unsubscribe("r"));
        assertEquals(List.of("ejected r UNSUBSCRIBED"), a.events);
        f.send("r", 0, "m2");
        assertEquals(List.of("m1"), a.payloads());
        assertEquals(0, f.state("r").backlog());
    }

    @Test
    void s04_theNextMessageWaitsForEverySyncMembersAck() {
        TestClient a = f.join("A", "r", SYNC);
        TestClient b = f.join("B", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2", "m3");
        assertEquals(List.of("m1"), a.fresh());
        assertEquals(List.of("m1"), b.fresh());
        assertEquals(AckOutcome.ACKED, a.ackLast());
        assertEquals(List.of(), a.fresh(), "B has not acked yet");
        assertEquals(List.of(), b.fresh());
        assertEquals(AckOutcome.ACKED, b.ackLast());
        assertEquals(List.of("m2"), a.fresh());
        assertEquals(List.of("m2"), b.fresh());
    }

    @Test
    void s05_pendingMessagesAreReleasedByAscendingPriorityNegativesFirst() {
        TestClient a = f.join("A", "r", SYNC);
        f.send("r", 0, "m0");
        f.send("r", 5, "p5");
        f.send("r", 1, "p1");
        f.send("r", 3, "p3");
        f.send("r", -1, "p-1");
        assertEquals(List.of("m0"), a.fresh());
        for (String expected : List.of("p-1", "p1", "p3", "p5")) {
            a.ackLast();
            assertEquals(List.of(expected), a.fresh());
        }
    }

    @Test
    void s06_aMoreUrgentMessageDoesNotOvertakeTheOneInFlight() {
        TestClient a = f.join("A", "r", SYNC);
        f.send("r", 5, "low");
        f.send("r", 0, "urgent");
        assertEquals(List.of("low"), a.fresh());
        f.advance(RoomsFixture.T.dividedBy(2));
        assertEquals(List.of(), a.fresh());
        a.ackLast();
        assertEquals(List.of("urgent"), a.fresh());
    }

    @Test
    void s07_outOfBandGoesToEveryoneAtOnceWithoutAckHandleAndLeavesTheGateAlone() {
        TestClient a = f.join("A", "r", SYNC);
        TestClient b = f.join("B", "r", SYNC);
        TestClient n = f.join("N", "r", ASYNC);
        f.sendAll("r", 0, "m1", "m2");
        a.ackLast();
        assertEquals(List.of("m1"), b.fresh());
        OutOfBandReceipt receipt = f.await(f.engine.sendOutOfBand("r", ByteString.copyFromUtf8("o1"), null));
        assertEquals(3, receipt.recipients());
        for (TestClient c : List.of(a, b, n)) {
            RoomDelivery o = c.last();
            assertEquals("o1", o.payload().toStringUtf8(), c + " got o1");
            assertTrue(o.outOfBand());
            assertFalse(o.ackable());
            assertTrue(o.messageId().startsWith(RoomDelivery.OUT_OF_BAND_PREFIX));
        }
        assertEquals(List.of("o1"), b.fresh(), "m2 is still withheld");
        assertEquals(AckOutcome.OUT_OF_BAND, b.ack("r", receipt.messageId()));
        assertEquals(1, f.state("r").backlog());
        assertEquals(AckOutcome.ACKED, b.ack("r", b.deliveries.get(0).messageId()));
        assertEquals(List.of("m2"), b.fresh());
        assertEquals(List.of("m1", "o1", "m2"), n.payloads());
    }

    @Test
    void s07_outOfBandToARoomWithoutSubscribersIsDroppedAndNeverStored() {
        OutOfBandReceipt receipt = f.await(f.engine.sendOutOfBand("empty", ByteString.copyFromUtf8("o"), null));
        assertEquals(0, receipt.recipients());
        TestClient a = f.join("A", "empty", SYNC);
        assertEquals(List.of(), a.payloads());
        assertTrue(f.replicator.proposed().isEmpty(), "nothing replicated");
    }

    @Test
    void s08_anAsyncListenerGetsEachMessageWithTheSyncMemberNeverAhead() {
        TestClient a = f.join("A", "r", SYNC);
        TestClient n = f.join("N", "r", ASYNC);
        f.sendAll("r", 0, "m1", "m2");
        assertEquals(List.of("m1"), a.fresh());
        assertEquals(List.of("m1"), n.fresh());
        assertFalse(n.last().ackable(), "listeners never ack");
        assertTrue(a.last().ackable());
        a.ackLast();
        assertEquals(List.of("m2"), n.fresh());
        assertEquals(List.of("m2"), a.fresh());
    }

    @Test
    void s09_withOnlyAsyncListenersEverythingGoesAtOnceAndNoBacklogBuilds() {
        TestClient n = f.join("N", "r", ASYNC);
        for (String[] m : new String[][] {{"3", "p3"}, {"1", "p1"}, {"2", "p2"}}) {
            f.send("r", Integer.parseInt(m[0]), m[1]);
            assertEquals(0, f.state("r").backlog());
        }
        assertEquals(List.of("p3", "p1", "p2"), n.payloads(), "each went out as soon as it was committed");
        assertTrue(n.deliveries.stream().noneMatch(RoomDelivery::ackable));
    }

    @Test
    void s09_aBatchSentToListenersOnlyIsHandedOverInReleaseOrder() {
        TestClient n = f.join("N", "r", ASYNC);
        f.await(f.engine.send("r", List.of(new RoomSend(3, ByteString.copyFromUtf8("p3")),
                new RoomSend(1, ByteString.copyFromUtf8("p1")), new RoomSend(2, ByteString.copyFromUtf8("p2"))), null));
        assertEquals(List.of("p1", "p2", "p3"), n.payloads());
        assertEquals(0, f.state("r").backlog());
    }
}
