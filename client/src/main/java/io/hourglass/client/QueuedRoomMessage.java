package io.hourglass.client;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A message waiting in a room, as {@link RoomClient#peek} shows it. The payload array is not
 * copied.
 *
 * @param messageId the id {@link RoomClient#send} returned
 * @param priority the send priority (lower first)
 * @param payload the body
 * @param producer the sender's client id, empty if it sent without a session
 * @param sentAtMs when it was sent, epoch milliseconds
 */
public record QueuedRoomMessage(String messageId, int priority, byte[] payload, String producer,
                                long sentAtMs) {
    public QueuedRoomMessage {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(producer, "producer");
    }

    /** The payload decoded as UTF-8 (malformed bytes become U+FFFD). */
    public String payloadUtf8() {
        return new String(payload, StandardCharsets.UTF_8);
    }
}
