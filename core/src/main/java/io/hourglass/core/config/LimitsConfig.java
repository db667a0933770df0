package io.hourglass.core.config;

import java.time.Duration;

/**
 * Limits on what clients may send; requests outside them are refused with INVALID_ARGUMENT.
 * Everything a message carries counts: payload, headers (their number and bytes), producer id.
 * Keys, defaults and bounds: the declarations below; the constructor checks how they relate.
 *
 * @param maxPayloadBytes {@link #MAX_PAYLOAD_BYTES}
 * @param maxTopicLength {@link #MAX_TOPIC_LENGTH}
 * @param maxDelay {@link #MAX_DELAY}
 * @param maxTtl {@link #MAX_TTL}
 * @param maxBatchMessages {@link #MAX_BATCH_MESSAGES}
 * @param maxBatchBytes {@link #MAX_BATCH_BYTES}: kept under Ratis' 4 MB append limit, whose breach would make
 *        the leader step down
 * @param maxHeaders {@link #MAX_HEADERS}
 * @param maxHeaderBytes {@link #MAX_HEADER_BYTES}
 * @param maxProducerIdBytes {@link #MAX_PRODUCER_ID_BYTES}
 * @param maxMessageBytes {@link #MAX_MESSAGE_BYTES}: unset, {@code limits.maxPayloadBytes} + 64 KiB when that is
 *        larger than the default
 */
public record LimitsConfig(int maxPayloadBytes, int maxTopicLength, Duration maxDelay, Duration maxTtl,
                           int maxBatchMessages, int maxBatchBytes, int maxHeaders, int maxHeaderBytes,
                           int maxProducerIdBytes, int maxMessageBytes) {
    /** Room for headers, topic and producer id on top of the payload, in the default message limit. */
    private static final int MESSAGE_OVERHEAD = 64 << 10;

    public static final ConfigKey<Integer> MAX_PAYLOAD_BYTES = ConfigKey.integer(
            "limits.maxPayloadBytes", 1 << 20, 1, 3_000_000,
            "Largest message payload, in bytes (1 MiB).");
    public static final ConfigKey<Integer> MAX_TOPIC_LENGTH = ConfigKey.integer(
            "limits.maxTopicLength", 200, 1, 1000,
            "Longest topic or group name, in characters.");
    public static final ConfigKey<Duration> MAX_DELAY = ConfigKey.duration(
            "limits.maxDelay", "365d", "0ms",
            "Longest publish delay.");
    public static final ConfigKey<Duration> MAX_TTL = ConfigKey.duration(
            "limits.maxTtl", "365d", "0ms",
            "Longest time to live.");
    public static final ConfigKey<Integer> MAX_BATCH_MESSAGES = ConfigKey.integer(
            "limits.maxBatchMessages", 10_000, 1, 60_000,
            "Most messages in one publish request.");
    public static final ConfigKey<Integer> MAX_BATCH_BYTES = ConfigKey.integer(
            "limits.maxBatchBytes", 3 << 20, 1, 3_500_000,
            "Most bytes in one publish request (3 MiB). At least limits.maxPayloadBytes, and under 3500000 as Raft "
                    + "refuses appends over 4 MB.");
    public static final ConfigKey<Integer> MAX_HEADERS = ConfigKey.integer(
            "limits.maxHeaders", 64, 0, 10_000,
            "Most headers on one message.");
    public static final ConfigKey<Integer> MAX_HEADER_BYTES = ConfigKey.integer(
            "limits.maxHeaderBytes", 16 << 10, 0, 1 << 20,
            "Most UTF-8 bytes of one message's header keys and values together (16 KiB).");
    public static final ConfigKey<Integer> MAX_PRODUCER_ID_BYTES = ConfigKey.integer(
            "limits.maxProducerIdBytes", 256, 1, 4096,
            "Longest producer message id (publish or room send), in UTF-8 bytes; the broker keeps it for "
                    + "deduplication.");
    public static final ConfigKey<Integer> MAX_MESSAGE_BYTES = ConfigKey.integer(
            "limits.maxMessageBytes", (1 << 20) + MESSAGE_OVERHEAD, 1, 3_500_000,
            "Largest message as stored: payload, headers, topic and producer id together (1 MiB + 64 KiB). Between "
                    + "limits.maxPayloadBytes and limits.maxBatchBytes; unset, it grows with a raised "
                    + "limits.maxPayloadBytes (that + 64 KiB).");

    /** The keys of this record, in the order the configuration reference lists them. */
    public static final ConfigSection SECTION = ConfigSection.of(
            "Limits: requests outside them are refused with INVALID_ARGUMENT", MAX_PAYLOAD_BYTES, MAX_TOPIC_LENGTH,
            MAX_DELAY, MAX_TTL, MAX_BATCH_MESSAGES, MAX_BATCH_BYTES, MAX_HEADERS, MAX_HEADER_BYTES,
            MAX_PRODUCER_ID_BYTES, MAX_MESSAGE_BYTES);

    public static final LimitsConfig DEFAULTS = from(Settings.empty());

    public LimitsConfig {
        if (maxPayloadBytes < 1 || maxBatchBytes < maxPayloadBytes) {
            throw new ConfigException("limits.maxBatchBytes must be at least limits.maxPayloadBytes (both positive)");
        }
        if (maxBatchBytes > MAX_BATCH_BYTES.max().orElseThrow()) {
            throw new ConfigException("limits.maxBatchBytes must stay under 3500000 (the Raft append limit is 4 MB)");
        }
        MAX_BATCH_MESSAGES.check(maxBatchMessages);
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
        int payload = MAX_PAYLOAD_BYTES.read(s);
        int batch = MAX_BATCH_BYTES.read(s);
        // Unset, the message limit follows a raised payload limit: 64 KiB for headers and ids on top.
        int message = Math.min(batch, Math.max(MAX_MESSAGE_BYTES.defaultValue(), payload + MESSAGE_OVERHEAD));
        return new LimitsConfig(payload, MAX_TOPIC_LENGTH.read(s), MAX_DELAY.read(s), MAX_TTL.read(s),
                MAX_BATCH_MESSAGES.read(s), batch, MAX_HEADERS.read(s), MAX_HEADER_BYTES.read(s),
                MAX_PRODUCER_ID_BYTES.read(s), MAX_MESSAGE_BYTES.readOr(s, message));
    }
}
