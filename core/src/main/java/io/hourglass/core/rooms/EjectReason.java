package io.hourglass.core.rooms;

/** Why a client left a room without leaving the broker. */
public enum EjectReason {
    /** The client unsubscribed from the room. */
    UNSUBSCRIBED,
    /** The sync member sent no heartbeat (ping, ack, subscribe, send) for its client timeout. */
    TIMEOUT,
    /** The sync member did not ack the in-flight message within the room's ack timeout. */
    ACK_TIMEOUT
}
