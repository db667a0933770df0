package io.hourglass.core.rooms;

/**
 * Where the engine sends one client's deliveries and events; the transport implements it (a gRPC
 * stream, a test). Every method is called on the engine thread, in order, and must be quick and
 * never block: a transport buffers what it cannot write at once, and when its buffer overflows it
 * ends the session with {@link RoomEngine#disconnect}. An exception thrown here is logged and
 * otherwise ignored.
 */
public interface RoomSink {
    /** A message for the client: a released message, or an out-of-band one. */
    void deliver(RoomDelivery delivery);

    /** The client left a room without asking to leave the broker: unsubscribed, or evicted. */
    void ejected(String room, EjectReason reason);

    /**
     * The broker ended the session (leadership lost, shutdown, or evicted from its last room); the
     * client id is no longer valid and the stream must end. The client connects again for a new id.
     */
    void closed(String reason);
}
