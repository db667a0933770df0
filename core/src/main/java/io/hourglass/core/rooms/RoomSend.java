package io.hourglass.core.rooms;

import com.google.protobuf.ByteString;
import java.util.Objects;

/** One message of a send request: lower priorities are released first, negatives allowed. */
public record RoomSend(int priority, ByteString payload, String producerId) {
    public RoomSend {
        Objects.requireNonNull(payload, "payload");
        producerId = producerId == null ? "" : producerId;
    }

    public RoomSend(int priority, ByteString payload) {
        this(priority, payload, "");
    }
}
