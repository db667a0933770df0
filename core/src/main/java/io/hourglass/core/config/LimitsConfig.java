package io.hourglass.core.config;

import java.time.Duration;

/**
 * Limits on what clients may send; requests outside them are refused with INVALID_ARGUMENT.
 * Everything a message carries counts: payload, headers (their number and bytes), producer id.
 *
 * @param maxPayloadBytes {@code limits.maxPayloadBytes} (1 MiB): largest message payload
 * @param maxTopicLength {@code limits.maxTopicLength} (200): longest topic or group name, in characters
 * @param maxDelay {@code limits.maxDelay} (365d): longest publish delay
 * @param maxTtl {@code limits.maxTtl} (365d): longest time to live
 * @param maxBatchMessages {@code limits.maxBatchMessages} (10000): messages in one publish request
 * @param maxBatchBytes {@code limits.maxBatchBytes} (3 MiB): bytes in one publish request (kept under
 *        Ratis' 4 MB append limit, whose breach would make the leader step down)
 * @param maxHeaders {@code limits.maxHeaders} (64): headers of one message
 * @param maxHeaderBytes {@code limits.maxHeaderBytes} (16 KiB): UTF-8 bytes of one message's header keys and values together
 * @param maxProducerIdBytes {@code limits.maxProducerIdBytes} (256): UTF-8 bytes of a producer message id
 *        (a publish's or a room send's), kept by the broker for deduplication
 * @param maxMessageBytes {@code limits.maxMessageBytes} (1 MiB + 64 KiB, or limits.maxPayloadBytes + 64 KiB
 *        when that is larger): one message as stored — payload, headers, topic and producer id together
 */
public record LimitsConfig(int maxPayloadBytes, int maxTopicLength, Duration maxDelay, Duration maxTtl,
                           int maxBatchMessages, int maxBatchBytes, int maxHeaders, int maxHeaderBytes,
                           int maxProducerIdBytes, int maxMessageBytes) {
    public static final LimitsConfig DEFAULTS = new LimitsConfig(1 << 20, 200, Duration.ofDays(365),
            Duration.ofDays(365), 10_000, 3 << 20, 64, 16 << 10, 256, (1 << 20) + (64 << 10));

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
        if (maxMessageBytes < maxPayloadBytes || maxMessageBytes > maxBatchBytes) {
            throw new ConfigException("limits.maxMessageBytes must be between limits.maxPayloadBytes ("
                    + maxPayloadBytes + ") and limits.maxBatchBytes (" + maxBatchBytes + "), got " + maxMessageBytes);
        }
        if (maxHeaders < 0 || maxHeaderBytes < 0 || maxProducerIdBytes < 1) {
            throw new ConfigException("limits.maxHeaders and limits.maxHeaderBytes must not be negative, "
                    + "limits.maxProducerIdBytes must be positive");
        }
    }

    public static LimitsConfig from(Settings s) {
        int payload = s.integer("limits.maxPayloadBytes", DEFAULTS.maxPayloadBytes, 1, 3_000_000);
        int batch = s.integer("limits.maxBatchBytes", DEFAULTS.maxBatchBytes, 1, 3_500_000);
        // Unset, the message limit follows a raised payload limit: 64 KiB for headers and ids on top.
        int message = Math.min(batch, Math.max(DEFAULTS.maxMessageBytes, payload + (64 << 10)));
        return new LimitsConfig(
                payload,
                s.integer("limits.maxTopicLength", DEFAULTS.maxTopicLength, 1, 1000),
                s.duration("limits.maxDelay", DEFAULTS.maxDelay, Duration.ZERO),
                s.duration("limits.maxTtl", DEFAULTS.maxTtl, Duration.ZERO),
                s.integer("limits.maxBatchMessages", DEFAULTS.maxBatchMessages, 1, 60_000),
                batch,
                s.integer("limits.maxHeaders", DEFAULTS.maxHeaders, 0, 10_000),
                s.integer("limits.maxHeaderBytes", DEFAULTS.maxHeaderBytes, 0, 1 << 20),
                s.integer("limits.maxProducerIdBytes", DEFAULTS.maxProducerIdBytes, 1, 4096),
                s.integer("limits.maxMessageBytes", message, 1, 3_500_000));
    }
}
