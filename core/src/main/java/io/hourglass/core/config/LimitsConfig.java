package io.hourglass.core.config;

import java.time.Duration;

/**
 * Limits on what clients may send; requests outside them are refused with INVALID_ARGUMENT.
 *
 * @param maxPayloadBytes {@code limits.maxPayloadBytes} (1 MiB): largest message payload
 * @param maxTopicLength {@code limits.maxTopicLength} (200): longest topic or group name, in characters
 * @param maxDelay {@code limits.maxDelay} (365d): longest publish delay
 * @param maxTtl {@code limits.maxTtl} (365d): longest time to live
 * @param maxBatchMessages {@code limits.maxBatchMessages} (10000): messages in one publish request
 * @param maxBatchBytes {@code limits.maxBatchBytes} (3 MiB): bytes in one publish request (kept under
 *        Ratis' 4 MB append limit, whose breach would make the leader step down)
 */
public record LimitsConfig(int maxPayloadBytes, int maxTopicLength, Duration maxDelay, Duration maxTtl,
                           int maxBatchMessages, int maxBatchBytes) {
    public static final LimitsConfig DEFAULTS = new LimitsConfig(1 << 20, 200, Duration.ofDays(365),
            Duration.ofDays(365), 10_000, 3 << 20);

    public LimitsConfig {
        if (maxPayloadBytes < 1 || maxBatchBytes < maxPayloadBytes) {
            throw new ConfigException("limits.maxBatchBytes must be at least limits.maxPayloadBytes (both positive)");
        }
        if (maxBatchBytes > 3_500_000) {
            throw new ConfigException("limits.maxBatchBytes must stay under 3500000 (the Raft append limit is 4 MB)");
        }
        if (maxBatchMessages < 1 || maxBatchMessages > 60_000) {
            throw new ConfigException("limits.maxBatchMessages must be between 1 and 60000");
        }
    }

    public static LimitsConfig from(Settings s) {
        return new LimitsConfig(
                s.integer("limits.maxPayloadBytes", DEFAULTS.maxPayloadBytes, 1, 3_000_000),
                s.integer("limits.maxTopicLength", DEFAULTS.maxTopicLength, 1, 1000),
                s.duration("limits.maxDelay", DEFAULTS.maxDelay, Duration.ZERO),
                s.duration("limits.maxTtl", DEFAULTS.maxTtl, Duration.ZERO),
                s.integer("limits.maxBatchMessages", DEFAULTS.maxBatchMessages, 1, 60_000),
                s.integer("limits.maxBatchBytes", DEFAULTS.maxBatchBytes, 1, 3_500_000));
    }
}
