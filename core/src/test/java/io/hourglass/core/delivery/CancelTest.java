package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.NotFoundException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.UnavailableException;
import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.storage.EventKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A producer's cancel (DESIGN §9): before dispatch it wins, after it the copy is not redelivered. */
@Timeout(30)
class CancelTest {
    @TempDir
    Path dir;
    private DeliveryFixture f;

    @BeforeEach
    void open() {
        f = new DeliveryFixture(dir, DeliveryFixture.config(1024, 16));
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void aCancelOfAPendingMessageDeletesItAndNobodyReceivesItWhenItWouldHaveBeenDue() {
        var group = f.subscribe("t", "g");
        var universal = f.subscribe("t", "");
        EventKey key = f.publish("t", 10_000, 60_000, "later").get(0);

        assertEquals(CancelOutcome.CANCELLED, f.engine.cancel("t", key).join());

        assertTrue(f.store.queue().message(key).isEmpty(), "deleted through replication");
        List<EventKey> expiring = new java.util.ArrayList<>();
        f.store.queue().scanExpired(Long.MAX_VALUE, expiring::add);
        assertEquals(List.of(), expiring, "its expiry entry went with it");
        f.advance(Duration.ofSeconds(11));
        assertEquals(0, f.engine.dispatchOnce());
        assertEquals(List.of(), group.payloads());
        assertEquals(List.of(), universal.payloads());
    }

    @Test
    void whileTheCancelIsBeingReplicatedTheDueMessageGoesToNoRecipient() {
        var group = f.subscribe("t", "g");
        var universal = f.subscribe("t", "");
        EventKey key = f.publish("t", 0, 0, "due now").get(0);
        f.replicator.deferNext();

        CompletableFuture<CancelOutcome> cancel = f.engine.cancel("t", key);
        assertFalse(cancel.isDone(), "not committed yet");
        assertEquals(0, f.engine.dispatchOnce(), "held back while the cancel is on its way");
        f.replicator.commitDeferred();

        assertEquals(CancelOutcome.CANCELLED, cancel.join());
        assertEquals(0, f.engine.dispatchOnce());
        assertEquals(List.of(), group.payloads());
        assertEquals(List.of(), universal.payloads());
    }

    @Test
    void aCancelThatNeverCommitsLeavesTheMessageDeliverable() {
        var group = f.subscribe("t", "g");
        EventKey key = f.publish("t", 0, 0, "kept").get(0);
        f.replicator.deferNext();
        CompletableFuture<CancelOutcome> cancel = f.engine.cancel("t", key);
        assertEquals(0, f.engine.dispatchOnce(), "held back: the pass moves past it");

        f.replicator.failDeferred();

        CompletionException e = assertThrows(CompletionException.class, cancel::join);
        assertInstanceOf(UnavailableException.class, e.getCause());
        assertEquals(1, f.engine.dispatchOnce(), "offered again once the cancel failed");
        assertEquals(List.of("kept"), group.payloads());
    }

    @Test
    void aCancelAfterADeliveryAnswersAlreadyDeliveredAndTheCopyIsNeverRedelivered() {
        var first = f.subscribe("t", "g");
        var second = f.subscribe("t", "g");
        EventKey key = f.publish("t", 0, 0, "out").get(0);
        assertEquals(1, f.engine.dispatchOnce());
        List<Delivery> taken = first.drain();
        taken.addAll(second.drain());
        assertEquals(1, taken.size());

        assertEquals(CancelOutcome.ALREADY_DELIVERED, f.engine.cancel("t", key).join());

        assertTrue(f.store.queue().message(key).isEmpty());
        f.advance(DeliveryConfig.DEFAULTS.inFlightTimeout().plusSeconds(1));
        assertEquals(0, f.engine.dispatchOnce(), "not redelivered after the in-flight timeout");
        assertEquals(List.of(), first.drain());
        assertEquals(List.of(), second.drain());
    }

    @Test
    void aMessageOneGroupAcknowledgedCountsAsDelivered() {
        var a = f.subscribe("t", "a");
        f.subscribe("t", "b"); // keeps the message stored after a's receipt
        EventKey key = f.publish("t", 10_000, 0, "m").get(0);
        f.advance(Duration.ofSeconds(11));
        f.engine.dispatchOnce();
        Delivery d = a.drain().get(0);
        f.engine.ack(a.consumer, d.tag(), true);
        f.engine.flushDeletes().join();
        assertTrue(f.store.queue().hasReceipt(key, "a"));

        assertEquals(CancelOutcome.ALREADY_DELIVERED, f.engine.cancel("t", key).join());
    }

    @Test
    void anUnknownMessageOrOneOfAnotherTopicIsNotFound() {
        EventKey key = f.publish("t", 10_000, 0, "m").get(0);

        CompletionException other = assertThrows(CompletionException.class, () -> f.engine.cancel("u", key).join());
        assertInstanceOf(NotFoundException.class, other.getCause());
        assertTrue(f.store.queue().message(key).isPresent(), "a cancel naming the wrong topic deletes nothing");
        f.engine.cancel("t", key).join();
        CompletionException again = assertThrows(CompletionException.class, () -> f.engine.cancel("t", key).join());
        assertInstanceOf(NotFoundException.class, again.getCause(), "cancelled already");
    }

    @Test
    void aFollowerRefersTheCancelToTheLeader() {
        EventKey key = f.publish("t", 10_000, 0, "m").get(0);
        f.engine.setLeading(false);

        CompletionException e = assertThrows(CompletionException.class, () -> f.engine.cancel("t", key).join());
        assertInstanceOf(NotLeaderException.class, e.getCause());
        assertTrue(f.store.queue().message(key).isPresent());
    }
}
