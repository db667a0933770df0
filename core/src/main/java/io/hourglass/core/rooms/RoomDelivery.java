package io.hourglass.core.rooms;

import com.google.protobuf.ByteString;
import java.util.Objects;

/**
 * One message handed to one subscriber.
 *
 * @param messageId the id to ack (opaque); out-of-band ids start with {@link #OUT_OF_BAND_PREFIX}
 * @param outOfBand sent past the gate; never stored, never acked
 * @param ackable the receiver must ack it: not out-of-band and received through a SYNC subscription
 * @param producer the sender's client id, or empty
 * @param redelivered an at-least-once message sent again by a new leader after a failover
 */
public record RoomDelivery(String room, String messageId, int priority, ByteString payload, boolean outOfBand,
                           boolean ackable, long sentAtMs, long deliveredAtMs, String producer, boolean redelivered) {
    /** Prefix of out-of-band message ids, which can never be confused with a pending message's id. */
    public static final String OUT_OF_BAND_PREFIX = "oob-";

    public RoomDelivery {
        Objects.requireNonNull(room, "room");
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(producer, "producer");
    }
}
