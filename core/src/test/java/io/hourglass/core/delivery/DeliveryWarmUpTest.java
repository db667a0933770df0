package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The start-up warm-up of the delivery engine's leader side runs a whole publish, deliver, NACK, ACK
 * and delete cycle over its own throwaway store, and leaves nothing behind; asked to stop, it stops.
 */
@Timeout(120)
class DeliveryWarmUpTest {
    @TempDir
    Path dir;

    @Test
    void deliversAndAcknowledgesEveryMessageThenDeletesItsDirectory() {
        Path warm = dir.resolve("warmup-delivery");

        assertTrue(DeliveryWarmUp.run(warm, Duration.ofSeconds(60), () -> false), "every message acknowledged in time");
        assertFalse(Files.exists(warm), "its directory is deleted");
    }

    @Test
    void stopsWhenAskedAndStillCleansUp() {
        Path warm = dir.resolve("warmup-delivery");

        assertFalse(DeliveryWarmUp.run(warm, Duration.ofSeconds(60), () -> true), "stopped before it was done");
        assertFalse(Files.exists(warm));
    }
}
