package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.command.QueueApplier;
import io.hourglass.core.command.QueueCommands;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.GroupPolicy;
import io.hourglass.core.storage.EventKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A durable group's redelivery policy (DESIGN §9): back-off after NACKs and in-flight timeouts,
 * replicated delivery counts that a new leader continues, and the move to the dead-letter topic
 * after max deliveries, also across a leader change.
 */
@Timeout(30)
class GroupPolicyTest {
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

    private void configure(String group, List<Long> backoff, Integer max, String deadLetter) {
        f.replicator.propose(QueueCommands.configureGroup("t", group, backoff, max, deadLetter)).join();
    }

    @Test
    void configureMergesWhatItSetsAndMakesTheGroupDurable() {
        configure("g", List.of(1_000L, 5_000L), null, null);
        configure("g", null, 3, "dlq");
        assertTrue(f.store.durableGroups("t").contains("g"));
        assertEquals(GroupPolicy.newBuilder().addBackoffMs(1_000).addBackoffMs(5_000).setMaxDeliveries(3)
                .setDeadLetterTopic("dlq").build(), f.store.queue().groupPolicy("t", "g").orElseThrow());
        configure("g", List.of(), 0, "");
        assertTrue(f.store.queue().groupPolicy("t", "g").isEmpty(), "a policy set back to nothing is removed");
    }

    @Test
    void nacksWithoutADelayWaitTheGroupsBackOffStepByStepTheLastRepeating() {
        configure("g", List.of(1_000L, 5_000L), null, null);
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        long[] waits = {1_000, 5_000, 5_000};
        for (int i = 0; i < waits.length; i++) {
            Delivery d = c.drain().get(0);
            assertEquals(i + 1, d.attempt());
            f.engine.nack(c.consumer, d.tag());
            f.advance(Duration.ofMillis(waits[i] - 1));
            assertEquals(0, f.engine.dispatchOnce(), "not before the back-off of attempt " + (i + 1));
            f.advance(Duration.ofMillis(1));
            assertEquals(1, f.engine.dispatchOnce(), "redelivered after " + waits[i] + " ms");
        }
        assertEquals(3, f.replicator.proposed().stream().filter(Command::hasDefer).count(), "each wait is replicated");
        assertEquals(3, f.engine.metrics().backedOff.sum());
    }

    @Test
    void anInFlightTimeoutWaitsTheBackOffToo() {
        configure("g", List.of(2_000L), null, null);
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        c.drain();
        f.advance(DeliveryFixture.config(1024, 16).inFlightTimeout());
        assertEquals(0, f.engine.dispatchOnce(), "timed out, then backing off");
        f.advance(Duration.ofMillis(2_000));
        assertEquals(1, f.engine.dispatchOnce());
        assertEquals(2, c.drain().get(0).attempt());
    }

    @Test
    void anExplicitNackDelayOverridesTheBackOff() {
        configure("g", List.of(60_000L), null, null);
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        f.engine.nack(c.consumer, c.drain().get(0).tag(), 100);
        f.advance(Duration.ofMillis(100));
        assertEquals(1, f.engine.dispatchOnce());
    }

    @Test
    void deliveryCountsOfUnacknowledgedMessagesAreReplicatedWithTheDeleteBatches() {
        var c = f.subscribe("t", "g");
        var other = f.publish("t", 0, 0, "m", "acked");
        f.engine.dispatchOnce();
        List<Delivery> ds = c.drain();
        f.engine.ack(c.consumer, ds.get(1).tag());
        f.engine.flushDeletes().join();
        assertEquals(0, f.store.queue().deliveryCount(other.get(0), "g"), "younger than a second: not counted yet");
        f.advance(Duration.ofMillis(DeliveryEngine.COUNT_AFTER_MS));
        f.engine.flushDeletes().join();
        assertEquals(1, f.store.queue().deliveryCount(other.get(0), "g"));
        assertEquals(0, f.store.queue().deliveryCount(other.get(1), "g"), "an acknowledged message needs no count");

        f.engine.nack(c.consumer, ds.get(0).tag());
        f.engine.dispatchOnce();
        Delivery again = c.drain().get(0);
        f.advance(Duration.ofMillis(DeliveryEngine.COUNT_AFTER_MS));
        f.engine.flushDeletes().join();
        assertEquals(2, f.store.queue().deliveryCount(other.get(0), "g"));

        f.engine.ack(c.consumer, again.tag());
        f.engine.flushDeletes().join();
        assertTrue(f.store.queue().message(other.get(0)).isEmpty());
        assertEquals(0, f.store.queue().deliveryCount(other.get(0), "g"), "deleted with its message");
    }

    @Test
    void aNewLeaderContinuesTheReplicatedCount() {
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        f.engine.nack(c.consumer, c.drain().get(0).tag());
        f.engine.dispatchOnce();
        assertEquals(2, c.drain().get(0).attempt());
        f.advance(Duration.ofMillis(DeliveryEngine.COUNT_AFTER_MS));
        f.engine.flushDeletes().join();

        f.engine.setLeading(false);
        f.engine.setLeading(true);
        var next = f.subscribe("t", "g");
        f.engine.dispatchOnce();
        assertEquals(3, next.drain().get(0).attempt(), "attempt numbers survive the leader change");
    }

    @Test
    void afterMaxDeliveriesTheMessageMovesToTheDeadLetterTopicWithHeadersNamingItsPast() {
        configure("g", null, 2, "dlq");
        var c = f.subscribe("t", "g");
        var dead = f.subscribe("dlq", "ops");
        EventKey key = f.publish("t", 0, 0, "poison").get(0);
        f.engine.dispatchOnce();
        f.engine.nack(c.consumer, c.drain().get(0).tag());
        f.engine.dispatchOnce();
        f.engine.nack(c.consumer, c.drain().get(0).tag());

        f.engine.dispatchOnce(); // a third delivery would pass the limit: moved instead
        assertEquals(List.of(), c.drain());
        assertTrue(f.store.queue().message(key).isEmpty(), "the group was its only group: gone from the topic");
        f.engine.dispatchOnce();
        List<Delivery> moved = dead.drain();
        assertEquals(1, moved.size());
        assertEquals("poison", moved.get(0).message().getPayload().toStringUtf8());
        Map<String, String> h = moved.get(0).message().getHeadersMap();
        assertEquals("t", h.get(QueueApplier.DEAD_LETTER_TOPIC));
        assertEquals("g", h.get(QueueApplier.DEAD_LETTER_GROUP));
        assertEquals(key.toHex(), h.get(QueueApplier.DEAD_LETTER_ID));
        assertEquals("2", h.get(QueueApplier.DEAD_LETTER_DELIVERIES));
        assertEquals("nack", h.get(QueueApplier.DEAD_LETTER_REASON));
        assertEquals(1, f.engine.metrics().deadLettered.sum());
    }

    @Test
    void aNackOfTheLastAllowedDeliveryMovesTheMessageAtOnceWithoutAnotherPass() {
        configure("g", null, 1, "dlq");
        var c = f.subscribe("t", "g");
        EventKey key = f.publish("t", 0, 0, "m").get(0);
        f.engine.dispatchOnce();
        f.engine.nack(c.consumer, c.drain().get(0).tag());
        assertTrue(f.store.queue().message(key).isEmpty(), "moved when the NACK came, not when a consumer next has room");
        assertEquals(1, f.engine.metrics().deadLettered.sum());
    }

    @Test
    void aTimedOutLastDeliveryMovesTooWithTheReasonTimeout() {
        configure("g", null, 1, "dlq");
        var c = f.subscribe("t", "g");
        EventKey key = f.publish("t", 0, 0, "m").get(0);
        f.engine.dispatchOnce();
        c.drain();
        f.advance(DeliveryFixture.config(1024, 16).inFlightTimeout());
        f.engine.dispatchOnce();
        assertTrue(f.store.queue().message(key).isEmpty());
        var dead = f.subscribe("dlq", "ops");
        f.engine.dispatchOnce();
        assertEquals("timeout", dead.drain().get(0).message().getHeadersMap().get(QueueApplier.DEAD_LETTER_REASON));
    }

    @Test
    void aDeadLetterOfOneGroupLeavesTheMessageToTheOthers() {
        configure("g", null, 1, "dlq");
        var g = f.subscribe("t", "g");
        var h = f.subscribe("t", "h");
        EventKey key = f.publish("t", 0, 0, "m").get(0);
        f.engine.dispatchOnce();
        f.engine.nack(g.consumer, g.drain().get(0).tag());
        f.engine.dispatchOnce();
        assertEquals(List.of(), g.drain());
        assertTrue(f.store.queue().hasReceipt(key, "g"), "moved out of g");
        assertFalse(f.store.queue().message(key).isEmpty(), "h has not acknowledged it");
        assertEquals(List.of("m"), h.payloads());
    }

    @Test
    void aNewLeaderMovesAMessageThatReachedTheLimitUnderItsPredecessor() {
        configure("g", null, 2, "dlq");
        var c = f.subscribe("t", "g");
        EventKey key = f.publish("t", 0, 0, "m").get(0);
        f.engine.dispatchOnce();
        f.engine.nack(c.consumer, c.drain().get(0).tag());
        f.engine.dispatchOnce();
        c.drain(); // the second delivery is out when the leader goes
        f.advance(Duration.ofMillis(DeliveryEngine.COUNT_AFTER_MS));
        f.engine.flushDeletes().join();

        f.engine.setLeading(false);
        f.engine.setLeading(true);
        var next = f.subscribe("t", "g");
        f.engine.dispatchOnce();
        assertEquals(List.of(), next.drain(), "no third delivery");
        assertTrue(f.store.queue().message(key).isEmpty());
        var dead = f.subscribe("dlq", "ops");
        f.engine.dispatchOnce();
        Delivery moved = dead.drain().get(0);
        assertEquals("2", moved.message().getHeadersMap().get(QueueApplier.DEAD_LETTER_DELIVERIES));
    }

    @Test
    void aFailedMoveOffersTheMessageAgainAfterABackOffThatDoubles() {
        configure("g", null, 1, "dlq");
        var c = f.subscribe("t", "g");
        EventKey key = f.publish("t", 0, 0, "m").get(0);
        f.engine.dispatchOnce();
        f.replicator.failNext(2);
        f.engine.nack(c.consumer, c.drain().get(0).tag());
        assertFalse(f.store.queue().message(key).isEmpty(), "the move did not commit");
        int failed = f.replicator.failedSoFar();
        f.engine.dispatchOnce();
        assertEquals(failed, f.replicator.failedSoFar(), "not proposed again before the back-off ran out");

        f.manualClock.advance(Duration.ofMillis(DeadLetters.FIRST_RETRY_MS));
        f.engine.dispatchOnce(); // tried again: fails a second time
        assertFalse(f.store.queue().message(key).isEmpty(), "the second try did not commit either");
        f.manualClock.advance(Duration.ofMillis(DeadLetters.FIRST_RETRY_MS));
        f.engine.dispatchOnce();
        assertFalse(f.store.queue().message(key).isEmpty(), "the second wait is twice the first");
        f.manualClock.advance(Duration.ofMillis(DeadLetters.FIRST_RETRY_MS));
        f.engine.dispatchOnce(); // moved this time
        assertTrue(f.store.queue().message(key).isEmpty());
        assertEquals(1, f.engine.metrics().deadLettered.sum());
        assertEquals(List.of(), c.drain(), "never delivered past the limit");
    }
}
