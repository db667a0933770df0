package io.hourglass.core.config;

import java.time.Duration;

/**
 * Settings of the delivery pipeline (DESIGN §4). Keys, defaults and bounds: the declarations below.
 *
 * @param dispatchPollInterval {@link #DISPATCH_POLL_INTERVAL}
 * @param consumerQueueSize {@link #CONSUMER_QUEUE_SIZE}
 * @param inFlightTimeout {@link #IN_FLIGHT_TIMEOUT}
 * @param deleteBatchInterval {@link #DELETE_BATCH_INTERVAL}
 * @param deleteBatchMaxKeys {@link #DELETE_BATCH_MAX_KEYS}
 * @param ttlSweepInterval {@link #TTL_SWEEP_INTERVAL}
 */
public record DeliveryConfig(Duration dispatchPollInterval, int consumerQueueSize, Duration inFlightTimeout,
                             Duration deleteBatchInterval, int deleteBatchMaxKeys, Duration ttlSweepInterval) {
    public static final ConfigKey<Duration> DISPATCH_POLL_INTERVAL = ConfigKey.duration(
            "delivery.dispatchPollInterval", "50ms", "1ms",
            "Longest pause between dispatcher passes over due messages.");
    public static final ConfigKey<Integer> CONSUMER_QUEUE_SIZE = ConfigKey.integer(
            "delivery.consumerQueueSize", 1024, 1, 1 << 20,
            "Deliveries buffered per connected consumer, and frames per room session, waiting for a client that "
                    + "reads slowly. A room session that overflows it is closed (RESOURCE_EXHAUSTED).");
    public static final ConfigKey<Duration> IN_FLIGHT_TIMEOUT = ConfigKey.duration(
            "delivery.inFlightTimeout", "5s", "1ms",
            "A delivery not acknowledged within this time is delivered again.");
    public static final ConfigKey<Duration> DELETE_BATCH_INTERVAL = ConfigKey.duration(
            "delivery.deleteBatchInterval", "100ms", "1ms",
            "How often acknowledgements and expirations are flushed as replicated deletions. What a new leader "
                    + "delivers again after a failover includes the plain ACKs of the last interval.");
    public static final ConfigKey<Integer> DELETE_BATCH_MAX_KEYS = ConfigKey.integer(
            "delivery.deleteBatchMaxKeys", 1024, 1, 65_536,
            "Most deletions in one replicated batch.");
    public static final ConfigKey<Duration> TTL_SWEEP_INTERVAL = ConfigKey.duration(
            "delivery.ttlSweepInterval", "60s", "1ms",
            "How often the janitor removes messages whose TTL has passed.");

    /** The keys of this record, in the order the configuration reference lists them. */
    public static final ConfigSection SECTION = ConfigSection.of("Delivery", DISPATCH_POLL_INTERVAL,
            CONSUMER_QUEUE_SIZE, IN_FLIGHT_TIMEOUT, DELETE_BATCH_INTERVAL, DELETE_BATCH_MAX_KEYS, TTL_SWEEP_INTERVAL);

    public static final DeliveryConfig DEFAULTS = from(Settings.empty());

    /**
     * Checks only what the pipeline needs (positive values): the keys' bounds apply to configured values,
     * when {@link #from} reads them, so that tests may build a record outside them.
     */
    public DeliveryConfig {
        requirePositive(DISPATCH_POLL_INTERVAL, dispatchPollInterval);
        requirePositive(IN_FLIGHT_TIMEOUT, inFlightTimeout);
        requirePositive(DELETE_BATCH_INTERVAL, deleteBatchInterval);
        requirePositive(TTL_SWEEP_INTERVAL, ttlSweepInterval);
        if (consumerQueueSize < 1) {
            throw new ConfigException(CONSUMER_QUEUE_SIZE + " must be at least 1");
        }
        if (deleteBatchMaxKeys < 1) {
            throw new ConfigException(DELETE_BATCH_MAX_KEYS + " must be at least 1");
        }
    }

    public static DeliveryConfig from(Settings s) {
        return new DeliveryConfig(DISPATCH_POLL_INTERVAL.read(s), CONSUMER_QUEUE_SIZE.read(s),
                IN_FLIGHT_TIMEOUT.read(s), DELETE_BATCH_INTERVAL.read(s), DELETE_BATCH_MAX_KEYS.read(s),
                TTL_SWEEP_INTERVAL.read(s));
    }

    private static void requirePositive(ConfigKey<Duration> key, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new ConfigException(key + " must be a positive duration");
        }
    }
}
