package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.storage.EventKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class TtlTest {
    @TempDir
    Path dir;
    private DeliveryFixture f;

    @BeforeEach
    void open() {
        f = new DeliveryFixture(dir, DeliveryConfig.DEFAULTS);
    }

    @AfterEach
    void close() {
        f.close();
    }

    @Test
    void expiredMessageIsNeverDeliveredAndIsDeleted() {
        EventKey key = f.publish("t", 100, 50, "short-lived").get(0);
        var c = f.subscribe("t", "g");
        f.advance(Duration.ofMillis(150));
        assertEquals(0, f.engine.dispatchOnce(), "due and expired at the same instant: not delivered");
        assertEquals(List.of(), c.drain());
        assertEquals(1, f.engine.metrics().expired.sum());
        f.engine.flushDeletes().join();
        assertTrue(f.store.queue().message(key).isEmpty());
    }

    @Test
    void messageDeliveredWhileAliveIsNotDeliveredAgainAfterExpiry() {
        f.publish("t", 0, 1_000, "m");
        var c = f.subscribe("t", "g");
        assertEquals(1, f.engine.dispatchOnce());
        c.drain();
        f.advance(Duration.ofSeconds(10));
        assertEquals(0, f.engine.dispatchOnce(), "in-flight timed out, but the TTL passed too");
    }

    @Test
    void aDeliveryWhoseTtlPassesWhileItWaitsInTheBufferIsNotSentAndTheMessageIsDeletedAsExpired() {
        EventKey key = f.publish("t", 0, 1_000, "buffered").get(0);
        var c = f.subscribe("t", "g");
        assertEquals(1, f.engine.dispatchOnce(), "alive: buffered for the stream");
        f.advance(Duration.ofMillis(1_000));
        assertEquals(List.of(), c.drain(), "the stream took it only after its TTL");
        assertEquals(1, f.engine.metrics().expiredInBuffer.sum());
        f.advance(DeliveryConfig.DEFAULTS.inFlightTimeout());
        assertEquals(0, f.engine.dispatchOnce(), "handed back by the in-flight timeout: expired, not delivered");
        f.engine.flushDeletes().join();
        assertTrue(f.store.queue().message(key).isEmpty());
    }

    @Test
    void janitorRemovesExpiredMessagesOfTopicsWithoutConsumers() {
        EventKey expiring = f.publish("nobody-listens", 0, 1_000, "x").get(0);
        EventKey lasting = f.publish("nobody-listens", 0, 0, "y").get(0);
        assertEquals(0, f.engine.sweepExpired(), "nothing expired yet");
        f.advance(Duration.ofMillis(1_000));
        assertEquals(1, f.engine.sweepExpired());
        assertEquals(0, f.engine.sweepExpired(), "queued once, not twice");
        f.engine.flushDeletes().join();
        assertTrue(f.store.queue().message(expiring).isEmpty());
        assertTrue(f.store.queue().message(lasting).isPresent());
    }

    @Test
    void theJanitorReadsOnlyWhatExpired() {
        String[] longLived = new String[5_000];
        java.util.Arrays.fill(longLived, "lives an hour");
        f.publish("t", 0, 3_600_000, longLived);
        f.publish("t", 0, 100, "a", "b", "c");
        f.advance(java.time.Duration.ofMillis(101));
        assertEquals(3, f.engine.sweepExpired());
        assertEquals(3, f.engine.metrics().expiryKeysRead.sum(), "5 000 live TTLs are not visited");
    }
}
