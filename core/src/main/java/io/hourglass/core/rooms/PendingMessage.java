package io.hourglass.core.rooms;

import io.hourglass.core.proto.RoomMessage;
import java.util.Objects;

/**
 * What the gate keeps of a pending message: everything but the payload, which stays in the store
 * until the message is released (a backlog costs the leader a few dozen bytes per message).
 */
public record PendingMessage(RoomKey key, String room, int priority, long sentAtMs, String producer) {
    public PendingMessage {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(room, "room");
        Objects.requireNonNull(producer, "producer");
    }

    public String id() {
        return key.id();
    }

    static PendingMessage of(RoomKey key, RoomMessage m) {
        return new PendingMessage(key, m.getRoom(), m.getPriority(), m.getSentAtMs(), m.getProducer());
    }

    /** Reads a stored message's key from its id; empty when the id is malformed. */
    static java.util.Optional<PendingMessage> of(RoomMessage m) {
        return RoomKey.fromId(m.getId()).map(k -> of(k, m));
    }
}
