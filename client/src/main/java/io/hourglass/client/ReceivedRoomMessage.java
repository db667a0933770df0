package io.hourglass.client;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One message a {@link RoomSession} received in a room. Pass it to {@link RoomSession#ack} once
 * it is handled when {@link #ackable()}: the room stays closed for everyone until every SYNC
 * member has acked it.
 *
 * <p>The payload array is not copied; the record owns it and callers should not modify it.
 *
 * @param room the room
 * @param messageId the id {@link RoomClient#send} returned; acks name it
 * @param priority the send priority (lower first)
 * @param payload the body
 * @param oob whether it was sent out of band (never gated, never acked)
 * @param ackable whether this delivery must be acked: not out of band, to a SYNC subscription
 * @param redelivered an at-least-once room's in-flight message delivered again after a failover
 * @param producer the sender's client id, empty if it sent without a session
 * @param sentAtMs when the message was sent, epoch milliseconds
 * @param deliveredAtMs when the server released it to this session, epoch milliseconds
 */
public record ReceivedRoomMessage(String room, String messageId, int priority, byte[] payload,
                                  boolean oob, boolean ackable, boolean redelivered,
                                  String producer, long sentAtMs, long deliveredAtMs) {
    public ReceivedRoomMessage {
        Objects.requireNonNull(room, "room");
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(producer, "producer");
    }

    /** The payload decoded as UTF-8 (malformed bytes become U+FFFD). */
    public String payloadUtf8() {
        return new String(payload, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "ReceivedRoomMessage[room=" + room + ", messageId=" + messageId + ", priority="
                + priority + ", payload=" + payload.length + " bytes, oob=" + oob + ", ackable="
                + ackable + "]";
    }
}
