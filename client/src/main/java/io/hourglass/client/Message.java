package io.hourglass.client;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A message to publish.
 *
 * <p>The payload array is not copied: do not change it after handing the message to the
 * client. Invalid values (empty topic, negative delay or TTL) are refused here, before anything
 * is sent, so that one bad message cannot fail a whole batch.
 *
 * @param topic the topic, not blank
 * @param payload the body, any bytes (may be empty)
 * @param headers string headers, copied and unmodifiable
 * @param delay how long after publishing the message becomes due; zero = at once
 * @param ttl how long after its due time the message expires; zero = never
 * @param producerId an optional producer identifier stored with the message; empty if none
 * @param key an optional schedule key: publishing with the key of a message still pending in the
 *     topic replaces that message (payload, headers, delay, TTL); empty if none
 * @param every with a key: the message recurs, firing every this long (at least 1 s) until cancelled
 *     by its key, the first time after {@code delay}, or after one period without a delay; zero = once
 */
public record Message(String topic, byte[] payload, Map<String, String> headers, Duration delay,
                      Duration ttl, String producerId, String key, Duration every) {

    public Message {
        if (topic == null || topic.isBlank()) {
            throw new IllegalArgumentException("topic must not be empty");
        }
        Objects.requireNonNull(payload, "payload");
        headers = Map.copyOf(Objects.requireNonNull(headers, "headers"));
        delay = delay == null ? Duration.ZERO : delay;
        ttl = ttl == null ? Duration.ZERO : ttl;
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative: " + delay);
        }
        if (ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must not be negative: " + ttl);
        }
        producerId = producerId == null ? "" : producerId;
        key = key == null ? "" : key;
        every = every == null ? Duration.ZERO : every;
        if (every.isNegative()) {
            throw new IllegalArgumentException("every must not be negative: " + every);
        }
        if (!every.isZero() && key.isEmpty()) {
            throw new IllegalArgumentException("a recurring message (every) needs a key: it is cancelled by its key");
        }
    }

    /** A message that does not recur. */
    public Message(String topic, byte[] payload, Map<String, String> headers, Duration delay, Duration ttl,
                   String producerId, String key) {
        this(topic, payload, headers, delay, ttl, producerId, key, Duration.ZERO);
    }

    /** A message without a schedule key. */
    public Message(String topic, byte[] payload, Map<String, String> headers, Duration delay, Duration ttl,
                   String producerId) {
        this(topic, payload, headers, delay, ttl, producerId, "");
    }

    /** A message due at once that never expires, with a UTF-8 payload. */
    public static Message of(String topic, String payload) {
        return builder(topic).payload(payload).build();
    }

    public static Builder builder(String topic) {
        return new Builder(topic);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Message m
                && topic.equals(m.topic) && Arrays.equals(payload, m.payload)
                && headers.equals(m.headers) && delay.equals(m.delay) && ttl.equals(m.ttl)
                && producerId.equals(m.producerId) && key.equals(m.key) && every.equals(m.every);
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, Arrays.hashCode(payload), headers, delay, ttl, producerId, key, every);
    }

    @Override
    public String toString() {
        return "Message[topic=" + topic + ", payload=" + payload.length + " bytes, headers="
                + headers + ", delay=" + delay + ", ttl=" + ttl + ", producerId=" + producerId
                + (key.isEmpty() ? "" : ", key=" + key) + (every.isZero() ? "" : ", every=" + every) + "]";
    }

    /** Builds a {@link Message}; not thread-safe. */
    public static final class Builder {
        private final String topic;
        private byte[] payload = new byte[0];
        private final Map<String, String> headers = new LinkedHashMap<>();
        private Duration delay = Duration.ZERO;
        private Duration ttl = Duration.ZERO;
        private String producerId = "";
        private String key = "";
        private Duration every = Duration.ZERO;

        private Builder(String topic) {
            this.topic = topic;
        }

        public Builder payload(byte[] value) {
            this.payload = value;
            return this;
        }

        public Builder payload(String utf8) {
            this.payload = utf8.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        public Builder header(String key, String value) {
            headers.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        public Builder headers(Map<String, String> values) {
            values.forEach(this::header);
            return this;
        }

        public Builder delay(Duration value) {
            this.delay = value;
            return this;
        }

        public Builder ttl(Duration value) {
            this.ttl = value;
            return this;
        }

        public Builder producerId(String value) {
            this.producerId = value;
            return this;
        }

        /** The schedule key (see {@link Message#key()}). */
        public Builder key(String value) {
            this.key = value;
            return this;
        }

        /** The period of a recurring message (see {@link Message#every()}); needs a {@link #key}. */
        public Builder every(Duration value) {
            this.every = value;
            return this;
        }

        /** @throws IllegalArgumentException if a value is invalid */
        public Message build() {
            return new Message(topic, payload, headers, delay, ttl, producerId, key, every);
        }
    }
}
