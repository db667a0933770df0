package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.storage.EventKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dispatcher's per-recipient frontier: a pass reads only what it has not offered yet, so its
 * work does not grow with messages in flight or acknowledged-not-yet-deleted, nor with messages
 * pending in the future; what falls behind a frontier (a late publish, a NACK, a timeout) comes
 * back as a point read of exactly that key.
 */
@Timeout(60)
class DispatchCursorTest {
    @TempDir
    Path dir;
    private DeliveryFixture f;

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    private long read() {
        return f.engine.metrics().messagesRead.sum();
    }

    @Test
    void messagesInFlightAreNotReadAgainByLaterPasses() {
        f = new DeliveryFixture(dir, DeliveryFixture.config(10_000, 1024));
        var c = f.subscribe("t", "g");
        List<String> payloads = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            payloads.add("m" + i);
        }
        f.publish("t", 0, 0, payloads.toArray(String[]::new));
        assertEquals(1_000, f.engine.dispatchOnce());
        long afterFirst = read();
        assertEquals(1_000, afterFirst, "the first pass reads each due message once");
        for (int i = 0; i < 20; i++) {
            assertEquals(0, f.engine.dispatchOnce());
        }
        assertEquals(afterFirst, read(), "1 000 messages in flight cost later passes nothing");
        f.publish("t", 0, 0, "one more");
        assertEquals(1, f.engine.dispatchOnce());
        assertTrue(read() - afterFirst <= 2, "a new message costs its own read: " + (read() - afterFirst));
        assertEquals(1_001, c.drain().size());
    }

    @Test
    void messagesPendingInTheFutureAreNotRead() {
        f = new DeliveryFixture(dir, DeliveryFixture.config(100, 1024));
        f.subscribe("t", "g");
        List<String> later = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            later.add("later" + i);
        }
        f.publish("t", 3_600_000, 0, later.toArray(String[]::new));
        for (int i = 0; i < 10; i++) {
            assertEquals(0, f.engine.dispatchOnce());
        }
        assertTrue(read() <= 10, "a pass stops at the first key not yet due: read " + read());
    }

    @Test
    void aPublishAppliedAfterThePassWentByIsStillDelivered() {
        f = new DeliveryFixture(dir, DeliveryFixture.config(100, 1024));
        var c = f.subscribe("t", "g");
        // The leader stamps a publish before it is applied: a pass at a later clock may run between.
        f.replicator.stampLag(Duration.ofMillis(200));
        f.publish("t", 0, 0, "stamped in the past");
        f.replicator.stampLag(Duration.ZERO);
        f.engine.dispatchOnce();
        assertEquals(List.of("stamped in the past"), c.payloads());
        f.advance(Duration.ofMillis(500));
        f.engine.dispatchOnce(); // the frontier moves past now
        f.replicator.stampLag(Duration.ofMillis(300));
        f.publish("t", 0, 0, "behind the frontier");
        f.replicator.stampLag(Duration.ZERO);
        assertEquals(1, f.engine.dispatchOnce());
        assertEquals(List.of("behind the frontier"), c.payloads());
    }

    @Test
    void aFullRecipientKeepsItsPlaceWhileAnotherMovesOn() {
        f = new DeliveryFixture(dir, DeliveryFixture.config(2, 1024));
        var slow = f.subscribe("t", "slow");
        var fast = f.subscribe("t", "fast");
        f.publish("t", 0, 0, "a", "b", "c", "d", "e");
        Set<String> slowGot = new HashSet<>();
        Set<String> fastGot = new HashSet<>();
        for (int round = 0; round < 3; round++) {
            f.engine.dispatchOnce();
            fastGot.addAll(fast.payloads()); // fast drains every round
            f.engine.dispatchOnce();
            fastGot.addAll(fast.payloads());
            f.engine.dispatchOnce();
            fastGot.addAll(fast.payloads());
            slowGot.addAll(slow.payloads()); // slow drains only once per round
        }
        assertEquals(Set.of("a", "b", "c", "d", "e"), fastGot);
        assertEquals(Set.of("a", "b", "c", "d", "e"), slowGot, "nothing skipped while it was full");
    }

    @Test
    void aNackedOrTimedOutMessageComesBackAsAPointReadOfThatKey() {
        f = new DeliveryFixture(dir, DeliveryFixture.config(100, 1024));
        var c = f.subscribe("t", "g");
        List<String> payloads = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            payloads.add("m" + i);
        }
        f.publish("t", 0, 0, payloads.toArray(String[]::new));
        f.engine.dispatchOnce();
        List<Delivery> first = c.drain();
        f.engine.dispatchOnce();
        first.addAll(c.drain());
        assertEquals(200, first.size());
        long before = read();
        EventKey nacked = first.get(7).tag();
        f.engine.nack(c.consumer, nacked);
        assertEquals(1, f.engine.dispatchOnce());
        assertEquals(nacked, c.drain().get(0).tag());
        assertEquals(1, read() - before, "only the nacked key is read again");

        f.advance(DeliveryConfig.DEFAULTS.inFlightTimeout().plusMillis(1));
        before = read();
        assertEquals(100, f.engine.dispatchOnce(), "the buffer's worth of timed-out messages");
        assertEquals(100, c.drain().size());
        assertEquals(100, f.engine.dispatchOnce(), "the rest on the next pass");
        assertTrue(read() - before <= 200 + 100, "timed-out keys are read once, plus retries of a full buffer: "
                + (read() - before));
    }

    @Test
    void redeliveriesWaitingForAFullConsumerAreNotReadByEveryPass() {
        f = new DeliveryFixture(dir, DeliveryFixture.config(5, 1024));
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "1", "2", "3", "4", "5");
        assertEquals(5, f.engine.dispatchOnce());
        f.advance(DeliveryConfig.DEFAULTS.inFlightTimeout().plusMillis(1)); // all five time out, buffer still full
        long before = read();
        for (int i = 0; i < 10; i++) {
            assertEquals(0, f.engine.dispatchOnce());
        }
        assertEquals(before, read(), "nothing is decoded while the only recipient is full");
        assertEquals(5, c.drain().size());
        assertEquals(5, f.engine.dispatchOnce(), "redelivered once there is room");
        assertEquals(before + 5, read());
    }
}
