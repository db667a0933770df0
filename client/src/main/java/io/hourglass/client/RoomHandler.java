package io.hourglass.client;

/**
 * Receives what a {@link RoomSession} gets from the server.
 *
 * <p>Called on the session's own thread, one call at a time, in the order the server sent the
 * events, across reconnects (events received on a stream that has since failed are still
 * handled: a released room message is not sent again). A method that throws is logged and the
 * session carries on; the failed delivery is not acked. Blocking here delays the session's
 * later events but not its pings, replies or reconnects, so waiting for an
 * {@link RoomSession#ack} future inside a handler is safe.
 */
@FunctionalInterface
public interface RoomHandler {
    /** A message released in a room the session is subscribed to, or sent out of band. */
    void onMessage(ReceivedRoomMessage message) throws Exception;

    /** The server removed the session from a room (see {@link RoomEjection}). */
    default void onEjected(RoomEjection ejection) throws Exception {
    }

    /**
     * The session (re)opened: the server issued {@code clientId}. Called once per stream, before
     * the events that stream carries; after a reconnect the id is a new one.
     */
    default void onOpened(String clientId) throws Exception {
    }

    /**
     * The server answered a subscribe of {@code room} — one the user made, or the session's own
     * after a reconnect — as {@code clientId}. Called in order with the deliveries, so messages
     * released to the subscription come after it.
     */
    default void onSubscribed(String room, String clientId, RoomReply reply) throws Exception {
    }
}
