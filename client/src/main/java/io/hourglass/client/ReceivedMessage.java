package io.hourglass.client;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;

/**
 * One delivery of a message to a consumer.
 *
 * <p>The arrays are not copied; the record owns them and callers should not modify them.
 *
 * @param tag the 24-byte delivery tag; ACKs and NACKs name it
 * @param id hex of the tag, the id {@code publish} returned
 * @param topic the topic
 * @param payload the body
 * @param headers the headers given at publish time, unmodifiable
 * @param enqueuedAtMs when the leader accepted the message, epoch milliseconds
 * @param dueAtMs when the message became due, epoch milliseconds
 * @param deliveredAtMs when the server sent this delivery, epoch milliseconds
 * @param attempt 1 on the first delivery to this group or consumer, then 2, 3, …
 */
public record ReceivedMessage(byte[] tag, String id, String topic, byte[] payload,
                              Map<String, String> headers, long enqueuedAtMs, long dueAtMs,
                              long deliveredAtMs, int attempt) {
    public ReceivedMessage {
        Objects.requireNonNull(tag, "tag");
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(payload, "payload");
        headers = Map.copyOf(headers);
    }

    /** The payload decoded as UTF-8 (malformed bytes become U+FFFD). */
    public String payloadUtf8() {
        return new String(payload, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ReceivedMessage m
                && Arrays.equals(tag, m.tag) && id.equals(m.id) && topic.equals(m.topic)
                && Arrays.equals(payload, m.payload) && headers.equals(m.headers)
                && enqueuedAtMs == m.enqueuedAtMs && dueAtMs == m.dueAtMs
                && deliveredAtMs == m.deliveredAtMs && attempt == m.attempt;
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(tag), topic, attempt, deliveredAtMs);
    }

    @Override
    public String toString() {
        return "ReceivedMessage[id=" + id + ", topic=" + topic + ", payload=" + payload.length
                + " bytes, headers=" + headers + ", enqueuedAtMs=" + enqueuedAtMs + ", dueAtMs="
                + dueAtMs + ", deliveredAtMs=" + deliveredAtMs + ", attempt=" + attempt + "]";
    }
}
