package io.hourglass.core.rooms;

import static io.hourglass.core.rooms.SubscriptionMode.ASYNC;
import static io.hourglass.core.rooms.SubscriptionMode.SYNC;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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

/**
 * ROOMS.md scenario 18, the replicated part: a new engine over the same store stands for the new
 * leader. Old sessions end; clients connect again and resubscribe, saying which message they hold.
 */
@Timeout(30)
class RoomFailoverTest {
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

    /** Lets the failover's hold (the client timeout) pass, the given members pinging meanwhile. */
    private void pastTheHold(TestClient... members) {
        long until = f.clock.millis() + RoomsFixture.T.toMillis() + RoomsFixture.TICK.toMillis();
        while (f.clock.millis() < until) {
            f.advance(RoomsFixture.TICK);
            for (TestClient m : members) {
                m.ping();
            }
        }
    }

    private TestClient rejoin(String name, String room, String heldMessageId) {
        TestClient c = f.client(name);
        assertEquals(SubscribeOutcome.SUBSCRIBED,
                f.await(f.engine.subscribe(c.id, room, SYNC, heldMessageId)));
        return c;
    }

    @Test
    void atMostOnceTheNewLeaderNeverRedeliversAndWaitsForTheHoldersAcks() {
        TestClient a = f.join("A", "r", SYNC);
        TestClient b = f.join("B", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2");
        String m1 = a.last().messageId();
        f.failover();
        assertNotNull(a.closedReason, "the old leader's sessions end");
        TestClient a2 = rejoin("A2", "r", m1);
        TestClient b2 = rejoin("B2", "r", m1);
        assertEquals(Optional.of(m1), f.state("r").inFlightId());
        assertEquals(List.of(), a2.payloads(), "m1 is not delivered twice");
        assertEquals(AckOutcome.ACKED, a2.ack("r", m1));
        assertEquals(List.of(), a2.payloads(), "B2 still holds m1");
        assertEquals(AckOutcome.ACKED, b2.ack("r", m1));
        assertEquals(List.of(), a2.payloads(), "nothing is released while members may still be coming back");
        pastTheHold(a2, b2);
        assertEquals(List.of("m2"), a2.payloads());
        assertEquals(List.of("m2"), b2.payloads());
    }

    /**
     * Found by the chaos run: a room whose last message every member had acked kept its in-flight
     * record, so every failover held it for the whole client timeout (30 s by default) although
     * nobody held anything. Settling the record once all acked lets the new leader release at once.
     */
    @Test
    void atMostOnceARoomIdleAtTheFailoverReleasesTheNextMessageAtOnce() {
        TestClient a = f.join("A", "r", SYNC);
        TestClient b = f.join("B", "r", SYNC);
        f.sendAll("r", 0, "m1");
        String m1 = a.last().messageId();
        a.ack("r", m1);
        b.ack("r", m1);
        assertFalse(new RoomStore(f.store).room("r").hasInFlight(), "every member acked: the record is settled");
        f.failover();
        TestClient a2 = rejoin("A2", "r", "");
        TestClient b2 = rejoin("B2", "r", "");
        f.sendAll("r", 0, "m2");
        assertEquals(List.of("m2"), a2.payloads(), "no hold: nobody can hold a message");
        assertEquals(List.of("m2"), b2.payloads());
    }

    @Test
    void aMemberThatHoldsNothingCannotReleaseTheNextMessageWhileAHolderIsComingBack() {
        TestClient a = f.join("A", "r", SYNC);
        TestClient b = f.join("B", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2");
        String m1 = a.last().messageId();
        a.ack("r", m1);
        f.failover();
        TestClient a2 = f.join("A2", "r", SYNC); // acked m1 before the failover: holds nothing
        f.advance(RoomsFixture.TICK);
        assertEquals(List.of(), a2.payloads(), "B may still hold m1");
        TestClient b2 = rejoin("B2", "r", m1);
        assertEquals(List.of(), a2.payloads());
        assertEquals(AckOutcome.ACKED, b2.ack("r", m1), "the late holder's ack still counts");
        pastTheHold(a2, b2);
        assertEquals(List.of("m2"), a2.payloads());
        assertEquals(List.of("m2"), b2.payloads());
    }

    @Test
    void atMostOnceAHolderThatNeverComesBackIsEvictedAndReleasesTheNextMessage() {
        TestClient a = f.join("A", "r", SYNC);
        f.join("B", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2");
        String m1 = a.last().messageId();
        f.failover();
        TestClient a2 = rejoin("A2", "r", m1);
        TestClient b2 = rejoin("B2", "r", m1);
        a2.ack("r", m1);
        for (int i = 0; i < 6; i++) {
            f.advance(Duration.ofMillis(500));
            a2.ping();
        }
        assertEquals(List.of("ejected r TIMEOUT"), b2.events);
        assertEquals(List.of("m2"), a2.payloads());
    }

    @Test
    void atMostOnceMembersThatHoldNothingJoinReady() {
        TestClient a = f.join("A", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2");
        assertEquals(List.of("m1"), a.payloads());
        f.failover();
        TestClient a2 = f.join("A2", "r", SYNC);
        pastTheHold(a2);
        assertEquals(List.of("m2"), a2.payloads(), "the backlog survived; m1 did not come back");
        assertFalse(a2.last().redelivered());
    }

    @Test
    void atLeastOnceTheNewLeaderRedeliversTheInFlightMessageFirst() {
        f.await(f.engine.configure("r", new RoomSettings(DeliveryGuarantee.AT_LEAST_ONCE, Duration.ZERO)));
        TestClient a = f.join("A", "r", SYNC);
        f.send("r", 5, "m1");
        f.send("r", 9, "m2");
        assertEquals(List.of("m1"), a.payloads());
        f.send("r", 0, "urgent");
        f.failover();
        TestClient a2 = f.join("A2", "r", SYNC);
        pastTheHold(a2);
        assertEquals(List.of("m1"), a2.payloads(), "redelivered before the more urgent message");
        RoomDelivery again = a2.last();
        assertTrue(again.redelivered());
        assertTrue(again.ackable());
        assertEquals(a.last().messageId(), again.messageId(), "same id as before the failover");
        assertEquals(AckOutcome.ACKED, a2.ackLast());
        assertEquals(List.of("m1", "urgent"), a2.payloads());
        a2.ackLast();
        assertEquals(List.of("m1", "urgent", "m2"), a2.payloads());
    }

    /**
     * The chaos run's stalled room: the old leader proposed its Settle right before handing its
     * leadership over; held through the transfer, it was forwarded to the next leader and appended
     * there, after that leader had rebuilt the room from the store. Applied, it cleared the in-flight
     * record the new leader was about to redeliver: the redelivery found nothing, nobody could ack,
     * and nothing was released again. A decision applies only in its own leader's term.
     */
    @Test
    void atLeastOnceAnOldLeadersSettleAppliedUnderTheNextLeaderDoesNotStallTheRoom() {
        aSettleFromBeforeTheChangeAppliedAfterItDoesNotStallTheRoom(f::failover); // appended in the new term
    }

    /** m1 acked, its settle held back; {@code leadershipChange}; the settle appended; the room must go on. */
    private void aSettleFromBeforeTheChangeAppliedAfterItDoesNotStallTheRoom(Runnable leadershipChange) {
        f.await(f.engine.configure("r", new RoomSettings(DeliveryGuarantee.AT_LEAST_ONCE, Duration.ZERO)));
        TestClient a = f.join("A", "r", SYNC);
        f.send("r", 0, "m1");
        f.replicator.deferNext(); // the Settle that A's ack leads to
        assertEquals(AckOutcome.ACKED, a.ackLast());
        leadershipChange.run();
        f.replicator.commitDeferred(); // forwarded or held, appended only now
        f.send("r", 0, "m2");
        TestClient a2 = f.join("A2", "r", SYNC);
        pastTheHold(a2);
        assertEquals(List.of("m1"), a2.payloads(), "redelivered: the leader now cannot know it was acked");
        assertEquals(AckOutcome.ACKED, a2.ackLast());
        assertEquals(List.of("m1", "m2"), a2.payloads(), "and the room goes on");
    }

    /**
     * The same with a leader cut off and back in touch in the same term (so the term does not fence
     * off its earlier decision): it rebuilt its rooms with m1 in flight, and its own settle of m1 from
     * before, appended only now, must not clear that record. The rebuild appends a fence first; the
     * settle, decided by the earlier leadership of the term, then changes nothing.
     */
    @Test
    void atLeastOnceASettleFromBeforeACutOffAppliedAfterTheSameLeaderRebuiltDoesNotStallTheRoom() {
        aSettleFromBeforeTheChangeAppliedAfterItDoesNotStallTheRoom(f::cutOffAndBack); // appended after the rebuild
    }

    @Test
    void aMessageReleasedAtMostOnceIsNotRedeliveredAfterTheRoomTurnsAtLeastOnce() {
        TestClient a = f.join("A", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2");
        f.await(f.engine.configure("r", new RoomSettings(DeliveryGuarantee.AT_LEAST_ONCE, Duration.ZERO)));
        f.failover();
        TestClient a2 = f.join("A2", "r", SYNC);
        pastTheHold(a2);
        assertEquals(List.of("m2"), a2.payloads(), "m1 was released at most once: it is not kept, so not resent");
        assertEquals(List.of("m1"), a.payloads());
    }

    @Test
    void atLeastOnceAMessageEveryoneAckedIsSettledAndNotRedelivered() {
        f.await(f.engine.configure("r", new RoomSettings(DeliveryGuarantee.AT_LEAST_ONCE, Duration.ZERO)));
        TestClient a = f.join("A", "r", SYNC);
        f.send("r", 0, "m1");
        a.ackLast();
        f.failover();
        TestClient a2 = f.join("A2", "r", SYNC);
        f.advance(RoomsFixture.TICK);
        assertEquals(List.of(), a2.payloads());
        assertEquals(DeliveryGuarantee.AT_LEAST_ONCE, f.state("r").settings().guarantee());
    }

    @Test
    void aSurvivingBacklogWaitsForItsMembersDuringTheGraceThenGoesToListeners() {
        f.join("A", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2", "m3");
        f.failover();
        TestClient n = f.join("N", "r", ASYNC);
        f.advance(Duration.ofSeconds(5));
        assertTrue(f.state("r").recovering());
        assertEquals(2, f.state("r").backlog(), "kept while no sync member is back");
        assertEquals(List.of(), n.payloads());
        f.advance(Duration.ofSeconds(6));
        assertEquals(List.of("m2", "m3"), n.payloads(), "after the grace, rule 1 applies");
        assertEquals(0, f.state("r").backlog());
    }

    @Test
    void aMemberBackWithinTheGraceGetsTheBacklog() {
        f.join("A", "r", SYNC);
        f.sendAll("r", 0, "m1", "m2", "m3");
        f.failover();
        f.advance(Duration.ofSeconds(3));
        TestClient a2 = f.client("A2").autoAck();
        a2.subscribe("r", SYNC);
        assertEquals(List.of("m2", "m3"), a2.payloads());
        assertFalse(f.state("r").recovering());
    }
}
