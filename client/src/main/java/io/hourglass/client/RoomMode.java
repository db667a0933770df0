package io.hourglass.client;

/** How a {@link RoomSession} takes part in a room. */
public enum RoomMode {
    /**
     * A gating member: the room releases its next message only when every SYNC member has acked
     * the last one. Deliveries carry an ack handle ({@link ReceivedRoomMessage#ackable()}); a
     * member that stops pinging is evicted after the session's client timeout.
     */
    SYNC,
    /** A listener: receives every released message, never gates, never acks, never evicted. */
    ASYNC
}
