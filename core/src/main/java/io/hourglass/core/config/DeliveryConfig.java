package io.hourglass.core.config;

import java.time.Duration;

/**
 * Settings of the delivery pipeline (DESIGN §4).
 *
 * @param dispatchPollInterval {@code delivery.dispatchPollInterval} (50ms): longest pause between dispatcher passes
 * @param consumerQueueSize {@code delivery.consumerQueueSize} (1024): buffered deliveries per consumer
 * @param inFlightTimeout {@code delivery.inFlightTimeout} (5s): unacknowledged deliveries are redelivered after this
 * @param deleteBatchInterval {@code delivery.deleteBatchInterval} (500ms): how often acks and expirations are flushed
 * @param deleteBatchMaxKeys {@code delivery.deleteBatchMaxKeys} (1024): deletions per replicated batch
 * @param ttlSweepInterval {@code delivery.ttlSweepInterval} (60s): how often the janitor removes expired messages
 */
public record DeliveryConfig(Duration dispatchPollInterval, int consumerQueueSize, Duration inFlightTimeout,
                             Duration deleteBatchInterval, int deleteBatchMaxKeys, Duration ttlSweepInterval) {
    public static final DeliveryConfig DEFAULTS = new DeliveryConfig(Duration.ofMillis(50), 1024,
            Duration.ofSeconds(5), Duration.ofMillis(500), 1024, Duration.ofSeconds(60));

    public DeliveryConfig {
        requirePositive("delivery.dispatchPollInterval", dispatchPollInterval);
        requirePositive("delivery.inFlightTimeout", inFlightTimeout);
        requirePositive("delivery.deleteBatchInterval", deleteBatchInterval);
        requirePositive("delivery.ttlSweepInterval", ttlSweepInterval);
        if (consumerQueueSize < 1) {
            throw new ConfigException("delivery.consumerQueueSize must be at least 1");
        }
        if (deleteBatchMaxKeys < 1) {
            throw new ConfigException("delivery.deleteBatchMaxKeys must be at least 1");
        }
    }

    public static DeliveryConfig from(Settings s) {
        Duration min = Duration.ofMillis(1);
        return new DeliveryConfig(
                s.duration("delivery.dispatchPollInterval", DEFAULTS.dispatchPollInterval, min),
                s.integer("delivery.consumerQueueSize", DEFAULTS.consumerQueueSize, 1, 1 << 20),
                s.duration("delivery.inFlightTimeout", DEFAULTS.inFlightTimeout, min),
                s.duration("delivery.deleteBatchInterval", DEFAULTS.deleteBatchInterval, min),
                s.integer("delivery.deleteBatchMaxKeys", DEFAULTS.deleteBatchMaxKeys, 1, 65_536),
                s.duration("delivery.ttlSweepInterval", DEFAULTS.ttlSweepInterval, min));
    }

    private static void requirePositive(String key, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new ConfigException(key + " must be a positive duration");
        }
    }
}
