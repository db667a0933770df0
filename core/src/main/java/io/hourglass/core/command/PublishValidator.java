package io.hourglass.core.command;

import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.config.LimitsConfig;
import io.hourglass.core.proto.NewMessage;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** Checks publish requests and subscription names against {@link LimitsConfig} before anything is proposed. */
public final class PublishValidator {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._:/\\-]+");
    private final LimitsConfig limits;

    public PublishValidator(LimitsConfig limits) {
        this.limits = limits;
    }

    /**
     * A message id (the hex of its 24-byte key, as Publish answers it) from a request;
     * {@link InvalidRequestException} quoting at most a short prefix of it otherwise.
     *
     * @param what what the id is, for the message ("message id", "page token")
     */
    public static io.hourglass.core.storage.EventKey messageId(String hex, String what) {
        try {
            return io.hourglass.core.storage.EventKey.fromHex(hex);
        } catch (RuntimeException e) {
            throw new InvalidRequestException("not a " + what + " (48 hex digits): '"
                    + io.hourglass.core.HourglassException.excerpt(hex) + "'");
        }
    }

    /** A NACK's delay: not negative, at most {@code limits.maxDelay}. */
    public void validateNackDelay(long delayMs) {
        if (delayMs < 0 || delayMs > limits.maxDelay().toMillis()) {
            throw new InvalidRequestException("NACK delay " + delayMs + "ms must be between 0 and limits.maxDelay ("
                    + limits.maxDelay().toMillis() + "ms)");
        }
    }

    /** Back-off steps a group may have at most. */
    public static final int MAX_BACKOFF_STEPS = 16;
    /** The highest {@code max_deliveries} a group may have. */
    public static final int MAX_DELIVERIES = 10_000;

    /**
     * A group policy as it would be stored (the request merged into the current one): back-off
     * steps of 1 ms to {@code limits.maxDelay}, at most {@link #MAX_BACKOFF_STEPS}; max deliveries 0
     * (unlimited) to {@link #MAX_DELIVERIES}, and then a dead-letter topic other than the group's own.
     */
    public void validateGroupPolicy(String topic, io.hourglass.core.proto.GroupPolicy p) {
        if (p.getBackoffMsCount() > MAX_BACKOFF_STEPS) {
            throw new InvalidRequestException("back-off has " + p.getBackoffMsCount() + " steps; at most "
                    + MAX_BACKOFF_STEPS + " are allowed");
        }
        for (long step : p.getBackoffMsList()) {
            if (step < 1 || step > limits.maxDelay().toMillis()) {
                throw new InvalidRequestException("back-off step " + step + "ms must be between 1ms and limits.maxDelay ("
                        + limits.maxDelay().toMillis() + "ms)");
            }
        }
        if (p.getMaxDeliveries() < 0 || p.getMaxDeliveries() > MAX_DELIVERIES) {
            throw new InvalidRequestException("max deliveries " + p.getMaxDeliveries() + " must be between 0 (unlimited) and "
                    + MAX_DELIVERIES);
        }
        if (!p.getDeadLetterTopic().isEmpty()) {
            validateTopic(p.getDeadLetterTopic());
            if (p.getDeadLetterTopic().equals(topic)) {
                throw new InvalidRequestException("the dead-letter topic must not be the group's own topic");
            }
        }
        if (p.getMaxDeliveries() > 0 && p.getDeadLetterTopic().isEmpty()) {
            throw new InvalidRequestException("max deliveries needs a dead-letter topic (--dead-letter): a message past "
                    + "the limit is moved there, never dropped");
        }
    }

    public void validateTopic(String topic) {
        validateName("topic", topic);
    }

    /** An empty group is allowed: it means a universal (fan-out) consumer. */
    public void validateGroup(String group) {
        if (!group.isEmpty()) {
            validateName("group", group);
        }
    }

    private void validateName(String what, String name) {
        if (name == null || name.isEmpty()) {
            throw new InvalidRequestException(what + " must not be empty");
        }
        if (name.length() > limits.maxTopicLength()) {
            throw new InvalidRequestException(what + " is " + name.length() + " characters long; the limit is "
                    + limits.maxTopicLength() + " (limits.maxTopicLength)");
        }
        if (!NAME.matcher(name).matches()) {
            throw new InvalidRequestException(what + " '" + name
                    + "' may only contain letters, digits and . _ - / :");
        }
    }

    private void validateHeaders(String where, NewMessage m) {
        if (m.getHeadersCount() > limits.maxHeaders()) {
            throw new InvalidRequestException(where + "a message may carry at most " + limits.maxHeaders()
                    + " headers (limits.maxHeaders), got " + m.getHeadersCount());
        }
        long headerBytes = 0;
        for (Map.Entry<String, String> h : m.getHeadersMap().entrySet()) {
            headerBytes += utf8Length(h.getKey()) + utf8Length(h.getValue());
        }
        if (headerBytes > limits.maxHeaderBytes()) {
            throw new InvalidRequestException(where + "the headers are " + headerBytes + " bytes (keys and values); "
                    + "the limit is " + limits.maxHeaderBytes() + " (limits.maxHeaderBytes)");
        }
    }

    /**
     * A producer message id (publish or room send) is kept for deduplication, so it has a small limit
     * of its own.
     */
    public void validateProducerId(String where, String producerId) {
        long n = utf8Length(producerId == null ? "" : producerId);
        if (n > limits.maxProducerIdBytes()) {
            throw new InvalidRequestException(where + "producer id is " + n + " bytes; the limit is "
                    + limits.maxProducerIdBytes() + " (limits.maxProducerIdBytes)");
        }
    }

    /**
     * A schedule key is kept in an index like a producer id, and shares its limit
     * ({@code limits.maxProducerIdBytes}).
     */
    public void validateKey(String where, String key) {
        long n = utf8Length(key == null ? "" : key);
        if (n > limits.maxProducerIdBytes()) {
            throw new InvalidRequestException(where + "key is " + n + " bytes; the limit is "
                    + limits.maxProducerIdBytes() + " (limits.maxProducerIdBytes)");
        }
    }

    /** The shortest period of a recurring message. */
    public static final long MIN_EVERY_MS = 1_000;

    /** A recurring message: needs a key (its cancel handle), a period of 1 s to limits.maxDelay. */
    private void validateEvery(String where, NewMessage m) {
        if (m.getEveryMs() == 0) {
            return;
        }
        if (m.getKey().isEmpty()) {
            throw new InvalidRequestException(where + "a recurring message (every) needs a key: it is cancelled by its key");
        }
        if (m.getEveryMs() < MIN_EVERY_MS || m.getEveryMs() > limits.maxDelay().toMillis()) {
            throw new InvalidRequestException(where + "every " + m.getEveryMs() + "ms must be between 1s and limits.maxDelay ("
                    + limits.maxDelay().toMillis() + "ms)");
        }
    }

    /** UTF-8 length without encoding: a request is measured before anything is copied. */
    private static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c)) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    public void validateBatch(List<NewMessage> messages) {
        if (messages.isEmpty()) {
            throw new InvalidRequestException("a publish request must carry at least one message");
        }
        if (messages.size() > limits.maxBatchMessages()) {
            throw new InvalidRequestException("a publish request may carry at most " + limits.maxBatchMessages()
                    + " messages (limits.maxBatchMessages), got " + messages.size());
        }
        long bytes = 0;
        for (int i = 0; i < messages.size(); i++) {
            NewMessage m = messages.get(i);
            String where = messages.size() == 1 ? "" : "message " + i + ": ";
            try {
                validateTopic(m.getTopic());
            } catch (InvalidRequestException e) {
                throw new InvalidRequestException(where + e.getMessage());
            }
            if (m.getDelayMs() < 0) {
                throw new InvalidRequestException(where + "delay must not be negative, got " + m.getDelayMs() + "ms");
            }
            if (m.getDelayMs() > limits.maxDelay().toMillis()) {
                throw new InvalidRequestException(where + "delay " + m.getDelayMs() + "ms exceeds limits.maxDelay ("
                        + limits.maxDelay().toMillis() + "ms)");
            }
            if (m.getTtlMs() < 0) {
                throw new InvalidRequestException(where + "ttl must not be negative, got " + m.getTtlMs() + "ms");
            }
            if (m.getTtlMs() > limits.maxTtl().toMillis()) {
                throw new InvalidRequestException(where + "ttl " + m.getTtlMs() + "ms exceeds limits.maxTtl ("
                        + limits.maxTtl().toMillis() + "ms)");
            }
            if (m.getPayload().size() > limits.maxPayloadBytes()) {
                throw new InvalidRequestException(where + "payload is " + m.getPayload().size()
                        + " bytes; the limit is " + limits.maxPayloadBytes() + " (limits.maxPayloadBytes)");
            }
            validateHeaders(where, m);
            validateProducerId(where, m.getProducerId());
            validateKey(where, m.getKey());
            validateEvery(where, m);
            int size = m.getSerializedSize();
            if (size > limits.maxMessageBytes()) {
                throw new InvalidRequestException(where + "the message is " + size + " bytes with its headers and ids; "
                        + "the limit is " + limits.maxMessageBytes() + " (limits.maxMessageBytes)");
            }
            bytes += size;
        }
        if (bytes > limits.maxBatchBytes()) {
            throw new InvalidRequestException("a publish request may carry at most " + limits.maxBatchBytes()
                    + " bytes (limits.maxBatchBytes), got " + bytes);
        }
    }
}
