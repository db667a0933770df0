package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.proto.Command;
import io.hourglass.core.storage.EventKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** In-flight tracking, redelivery, ACK/NACK and the deleter, pass by pass with a manual clock. */
@Timeout(30)
class InFlightAndAckTest {
    @TempDir
    Path dir;
    private DeliveryFixture f;

    @BeforeEach
    void open() {
        f = new DeliveryFixture(dir, DeliveryFixture.config(1024, 2));
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void unacknowledgedMessageIsRedeliveredAfterTheInFlightTimeoutPossiblyToAnotherMember() {
        var a = f.subscribe("t", "g");
        var b = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        assertEquals(List.of("m"), a.payloads());
        f.advance(DeliveryConfig.DEFAULTS.inFlightTimeout().minusMillis(1));
        assertEquals(0, f.engine.dispatchOnce(), "still in flight");
        f.advance(Duration.ofMillis(1));
        assertEquals(1, f.engine.dispatchOnce());
        Delivery again = b.drain().get(0);
        assertEquals(2, again.attempt());
        assertEquals(1, f.engine.metrics().redelivered.sum());
    }

    @Test
    void nackMakesTheMessageRedeliverableAtOnce() {
        var a = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        Delivery d = a.drain().get(0);
        f.engine.nack(a.consumer, d.tag());
        assertEquals(1, f.engine.dispatchOnce());
        assertEquals(2, a.drain().get(0).attempt());
    }

    @Test
    void disconnectReleasesTheConsumersMessagesAtOnce() {
        var a = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        assertEquals(1, a.drain().size());
        f.engine.disconnect(a.consumer);
        var b = f.subscribe("t", "g");
        assertEquals(1, f.engine.dispatchOnce(), "no need to wait for the in-flight timeout");
        assertEquals(List.of("m"), b.payloads());
    }

    @Test
    void deliveriesThatNeverLeftTheBufferComeBackAsTheSameAttempt() {
        var a = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m1", "m2", "m3", "m4", "m5");
        assertEquals(5, f.engine.dispatchOnce());
        // The stream carried two; three were still waiting in the consumer's buffer when it ended.
        Delivery sent1 = a.consumer.poll();
        Delivery sent2 = a.consumer.poll();
        f.engine.disconnect(a.consumer);
        var b = f.subscribe("t", "g");
        assertEquals(5, f.engine.dispatchOnce());
        java.util.Map<String, Integer> attempts = new java.util.TreeMap<>();
        b.drain().forEach(d -> attempts.put(d.message().getPayload().toStringUtf8(), d.attempt()));
        assertEquals(java.util.Map.of(sent1.message().getPayload().toStringUtf8(), 2,
                sent2.message().getPayload().toStringUtf8(), 2, "m3", 1, "m4", 1, "m5", 1), attempts);
        assertEquals(2, f.engine.metrics().redelivered.sum(), "only the two the first stream carried are redeliveries");
    }

    @Test
    void aConsumerGetsNoMoreThanItsUnackedLimitUntilItSettlesSome() {
        var a = f.subscribe("t", "g", 3);
        f.publish("t", 0, 0, "m1", "m2", "m3", "m4", "m5", "m6");
        assertEquals(3, f.engine.dispatchOnce());
        List<Delivery> first = a.drain();
        assertEquals(3, first.size());
        assertEquals(0, f.engine.dispatchOnce(), "three unsettled: the limit");
        f.engine.ack(a.consumer, first.get(0).tag());
        f.engine.nack(a.consumer, first.get(1).tag());
        // The NACKed one is due again at once: the two freed places go to it and to m4.
        assertEquals(2, f.engine.dispatchOnce());
        assertEquals(List.of("m2", "m4"), a.payloads().stream().sorted().toList());
        assertEquals(0, f.engine.dispatchOnce());
        var b = f.subscribe("t", "g");
        assertEquals(2, f.engine.dispatchOnce(), "a member without a limit takes the rest");
        assertEquals(List.of("m5", "m6"), b.payloads());
    }

    @Test
    void ackCountsOnlyForATagSentOnThatStream() {
        var a = f.subscribe("t", "g");
        var b = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        EventKey tag = a.drain().get(0).tag();
        assertThrows(InvalidRequestException.class, () -> f.engine.ack(b.consumer, tag), "foreign tag");
        EventKey unknown = new EventKey(1, 2, 3);
        assertThrows(InvalidRequestException.class, () -> f.engine.ack(a.consumer, unknown), "unknown tag");
        assertThrows(InvalidRequestException.class, () -> f.engine.nack(b.consumer, tag), "foreign NACK");
        f.engine.ack(a.consumer, tag);
        assertThrows(InvalidRequestException.class, () -> f.engine.ack(a.consumer, tag), "second ACK of one tag");
    }

    @Test
    void ackedMessageIsDeletedThroughReplicationAndNeverRedelivered() {
        var a = f.subscribe("t", "g");
        EventKey key = f.publish("t", 0, 0, "m").get(0);
        f.engine.dispatchOnce();
        CompletableFuture<Void> confirmed = f.engine.ack(a.consumer, a.drain().get(0).tag());
        assertFalse(confirmed.isDone(), "confirmed only once the delete batch commits");
        f.advance(Duration.ofMinutes(1));
        assertEquals(0, f.engine.dispatchOnce(), "acked: blocked even past the in-flight timeout");
        f.engine.flushDeletes().join();
        assertTrue(confirmed.isDone());
        assertTrue(f.store.queue().message(key).isEmpty());
        assertEquals(0, f.engine.dispatchOnce());
        assertEquals(0, f.engine.inFlightCount());
    }

    @Test
    void ackAllSettlesTheOwnedTagsAndReturnsTheOthersInOrder() {
        var a = f.subscribe("t", "g");
        List<EventKey> keys = f.publish("t", 0, 0, "m1", "m2");
        f.engine.dispatchOnce();
        List<EventKey> tags = a.drain().stream().map(Delivery::tag).toList();
        assertEquals(keys, tags);
        EventKey unknown = new EventKey(1, 2, 3);
        assertEquals(List.of(unknown), f.engine.ackAll(a.consumer, List.of(tags.get(0), unknown, tags.get(1))));
        assertEquals(List.of(tags.get(0)), f.engine.ackAll(a.consumer, List.of(tags.get(0))), "a tag settles once");
        f.advance(Duration.ofMinutes(1));
        assertEquals(0, f.engine.dispatchOnce(), "acked: not redelivered past the in-flight timeout");
        f.engine.flushDeletes().join();
        assertTrue(keys.stream().allMatch(k -> f.store.queue().message(k).isEmpty()));
        assertEquals(0, f.engine.inFlightCount());
    }

    @Test
    void deleterSendsAtMostMaxKeysPerBatch() {
        var a = f.subscribe("t", "g");
        f.publish("t", 0, 0, "1", "2", "3", "4", "5");
        f.engine.dispatchOnce();
        for (Delivery d : a.drain()) {
            f.engine.ack(a.consumer, d.tag());
        }
        int before = f.replicator.proposed().size();
        f.engine.flushDeletes().join();
        List<Command> batches = f.replicator.proposed().subList(before, f.replicator.proposed().size());
        assertEquals(List.of(2, 2, 1), batches.stream().map(c -> c.getDeleteBatch().getDeletionsCount()).toList());
    }

    @Test
    void failedDeleteBatchIsCountedRequeuedAndRetried() {
        var a = f.subscribe("t", "g");
        EventKey key = f.publish("t", 0, 0, "m").get(0);
        f.engine.dispatchOnce();
        CompletableFuture<Void> confirmed = f.engine.ack(a.consumer, a.drain().get(0).tag());
        f.replicator.failNext(1);
        f.engine.flushDeletes().join();
        assertEquals(1, f.engine.metrics().deleteFailures.sum());
        assertFalse(confirmed.isDone());
        assertEquals(1, f.engine.queuedDeletions(), "re-queued");
        f.engine.flushDeletes().join();
        assertTrue(confirmed.isDone() && !confirmed.isCompletedExceptionally());
        assertTrue(f.store.queue().message(key).isEmpty());
    }

    @Test
    void messageStaysUntilEveryDurableGroupAcknowledgesAndALateGroupGetsWhatIsPending() {
        var billing = f.subscribe("t", "billing");
        EventKey key = f.publish("t", 0, 0, "m").get(0);
        f.engine.dispatchOnce();
        // A second group subscribes after the message was published and delivered to the first.
        var audit = f.subscribe("t", "audit");
        f.engine.ack(billing.consumer, billing.drain().get(0).tag());
        f.engine.flushDeletes().join();
        assertTrue(f.store.queue().message(key).isPresent(), "audit has not acknowledged");
        assertEquals(1, f.engine.dispatchOnce());
        assertEquals(List.of(), billing.drain(), "billing's receipt is replicated: no second copy for it");
        Delivery d = audit.drain().get(0);
        f.engine.ack(audit.consumer, d.tag());
        f.engine.flushDeletes().join();
        assertTrue(f.store.queue().message(key).isEmpty());
    }

    @Test
    void universalOnlyTopicDeletesOnceEveryUniversalConsumerAcknowledged() {
        var u1 = f.subscribe("t", "");
        var u2 = f.subscribe("t", "");
        EventKey key = f.publish("t", 0, 0, "m").get(0);
        f.engine.dispatchOnce();
        f.engine.ack(u1.consumer, u1.drain().get(0).tag());
        f.engine.flushDeletes().join();
        assertTrue(f.store.queue().message(key).isPresent(), "u2 has not acknowledged");
        assertEquals(0, f.engine.dispatchOnce(), "no second copy for u1");
        f.engine.ack(u2.consumer, u2.drain().get(0).tag());
        f.engine.flushDeletes().join();
        assertTrue(f.store.queue().message(key).isEmpty());
    }

    @Test
    void losingLeadershipClosesConsumersAndForgetsInFlight() {
        var a = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        f.engine.setLeading(false);
        assertTrue(a.closedReason != null && a.closedReason.contains("no longer the leader"));
        assertEquals(0, f.engine.inFlightCount());
        assertEquals(0, f.engine.dispatchOnce(), "a follower never dispatches");
        f.engine.setLeading(true);
        var b = f.subscribe("t", "g");
        assertEquals(1, f.engine.dispatchOnce(), "the new leader starts from the replicated state");
        assertEquals(List.of("m"), b.payloads());
    }
}
