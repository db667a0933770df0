package io.hourglass.client;

import java.util.Objects;

/**
 * The server removed a {@link RoomSession} from a room. After {@link Reason#TIMEOUT} or
 * {@link Reason#ACK_TIMEOUT} the session no longer takes part in the room (it is not resubscribed
 * on reconnect); {@link RoomSession#subscribe} joins it again.
 *
 * @param room the room
 * @param reason why
 */
public record RoomEjection(String room, Reason reason) {
    /** Why a session left a room. */
    public enum Reason {
        /** The session unsubscribed. */
        UNSUBSCRIBED,
        /** No ping, ack, subscribe or send within the session's client timeout. */
        TIMEOUT,
        /** The room's ack timeout passed without this member's ack. */
        ACK_TIMEOUT,
        /** A reason this client version does not know. */
        UNKNOWN
    }

    public RoomEjection {
        Objects.requireNonNull(room, "room");
        Objects.requireNonNull(reason, "reason");
    }
}
