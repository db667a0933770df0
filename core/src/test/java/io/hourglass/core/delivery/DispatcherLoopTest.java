package io.hourglass.core.delivery;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hourglass.core.config.DeliveryConfig;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dispatcher's loop on its own thread, with the real clock. A poll interval of an hour makes
 * any delivery within the test's deadline the work of a wake-up or of the drain rule.
 */
@Timeout(60)
class DispatcherLoopTest {
    private static final Duration HOUR = Duration.ofHours(1);
    @TempDir
    Path dir;
    private DeliveryFixture f;

    private void start(Duration poll) {
        start(poll, DeliveryConfig.DEFAULTS.deleteBatchInterval(), DeliveryConfig.DEFAULTS.ttlSweepInterval());
    }

    private void start(Duration poll, Duration deleteInterval, Duration ttlSweep) {
        DeliveryConfig d = DeliveryConfig.DEFAULTS;
        f = new DeliveryFixture(dir, new DeliveryConfig(poll, d.consumerQueueSize(), d.inFlightTimeout(),
                deleteInterval, d.deleteBatchMaxKeys(), ttlSweep), Clock.systemUTC());
        f.engine.start();
    }

    @Test
    void theDeleterFlushesOnItsIntervalWithoutBeingAsked() {
        start(Duration.ofMillis(50), Duration.ofMillis(100), HOUR);
        var c = f.subscribe("t", "g");
        var key = f.publish("t", 0, 0, "m").get(0);
        await().atMost(Duration.ofSeconds(10)).until(() -> c.consumer.buffered() == 1);
        var confirmed = f.engine.ack(c.consumer, c.drain().get(0).tag());
        await().atMost(Duration.ofSeconds(10)).until(confirmed::isDone);
        assertEquals(true, f.store.queue().message(key).isEmpty());
    }

    @Test
    void theJanitorSweepsOnItsInterval() {
        start(HOUR, Duration.ofMillis(100), Duration.ofMillis(100));
        var key = f.publish("nobody-listens", 0, 200, "short-lived").get(0);
        await().atMost(Duration.ofSeconds(10)).until(() -> f.store.queue().message(key).isEmpty());
        assertEquals(1, f.engine.metrics().expired.sum());
    }

    @Test
    void aLeaderWithoutItsLeaseDispatchesNothingAndCountsThePassItPutOff() {
        start(HOUR);
        var c = f.subscribe("t", "g");
        await().atMost(Duration.ofSeconds(10)).until(() -> f.engine.metrics().dispatchPasses.sum() >= 1);
        f.replicator.lease(false);
        f.publish("t", 0, 0, "held back");
        await().atMost(Duration.ofSeconds(10)).until(() -> f.engine.metrics().passesWithoutLease.sum() >= 1);
        assertEquals(0, c.consumer.buffered(), "delivered without a lease");
        f.replicator.lease(true);
        f.publish("t", 0, 0, "after");
        await().atMost(Duration.ofSeconds(10)).until(() -> c.consumer.buffered() == 2);
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void registeringAConsumerWakesTheDispatcher() {
        start(HOUR);
        f.publish("t", 0, 0, "waiting");
        await().atMost(Duration.ofSeconds(10)).until(() -> f.engine.metrics().dispatchPasses.sum() >= 1);
        var c = f.subscribe("t", "g");
        await().atMost(Duration.ofSeconds(10)).until(() -> c.consumer.buffered() == 1);
    }

    @Test
    void applyingADueMessageWakesTheDispatcher() {
        start(HOUR);
        var c = f.subscribe("t", "g");
        await().atMost(Duration.ofSeconds(10)).until(() -> f.engine.metrics().dispatchPasses.sum() >= 2);
        f.publish("t", 0, 0, "now");
        await().atMost(Duration.ofSeconds(10)).until(() -> c.consumer.buffered() == 1);
    }

    @Test
    void aPassThatDispatchedIsFollowedAtOnceByAnother() {
        start(HOUR);
        await().atMost(Duration.ofSeconds(10)).until(() -> f.engine.metrics().dispatchPasses.sum() >= 1);
        long idle = f.engine.metrics().dispatchPasses.sum();
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        // wake → pass that dispatches → another pass at once (it finds nothing) → wait an hour.
        await().atMost(Duration.ofSeconds(10)).until(() -> c.consumer.buffered() == 1
                && f.engine.metrics().dispatchPasses.sum() >= idle + 2);
    }

    @Test
    void delayedMessagesAreFoundByThePollIntervalAlone() {
        start(Duration.ofMillis(50));
        var c = f.subscribe("t", "g");
        f.publish("t", 300, 0, "delayed");
        await().atMost(Duration.ofSeconds(10)).until(() -> c.consumer.buffered() == 1);
        Delivery d = c.drain().get(0);
        assertEquals(List.of(), c.drain());
        assertEquals(true, d.deliveredAtMs() >= d.message().getDueAtMs());
    }

    @Test
    void aDelayedMessageIsDeliveredByItsDueTimerWithoutThePollInterval() {
        start(HOUR);
        var c = f.subscribe("t", "g");
        await().atMost(Duration.ofSeconds(10)).until(() -> f.engine.metrics().dispatchPasses.sum() >= 1);
        f.publish("t", 300, 0, "on time");
        await().atMost(Duration.ofSeconds(10)).until(() -> c.consumer.buffered() == 1);
        Delivery d = c.drain().get(0);
        assertEquals(true, d.deliveredAtMs() >= d.message().getDueAtMs(), "never early");
    }

    @Test
    void aConsumerThatDrainsItsFullBufferGetsMoreWithoutThePollInterval() {
        DeliveryConfig d = DeliveryConfig.DEFAULTS;
        f = new DeliveryFixture(dir, new DeliveryConfig(HOUR, 4, d.inFlightTimeout(), d.deleteBatchInterval(),
                d.deleteBatchMaxKeys(), HOUR), Clock.systemUTC());
        f.engine.start();
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "1", "2", "3", "4", "5", "6", "7", "8", "9", "10");
        java.util.List<Delivery> got = new java.util.ArrayList<>();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            got.addAll(c.drain());
            return got.size() == 10;
        });
    }

    @Test
    void aConfirmedAckIsReplicatedWithoutWaitingForTheDeleteInterval() {
        start(Duration.ofMillis(50), HOUR, HOUR);
        var c = f.subscribe("t", "g");
        var key = f.publish("t", 0, 0, "m").get(0);
        await().atMost(Duration.ofSeconds(10)).until(() -> c.consumer.buffered() == 1);
        var confirmed = f.engine.ack(c.consumer, c.drain().get(0).tag(), true);
        await().atMost(Duration.ofSeconds(10)).until(confirmed::isDone);
        assertEquals(true, f.store.queue().message(key).isEmpty());
    }
}
