package io.hourglass.core.rooms;

/**
 * Told about membership changes an operator or a monitoring stream cares about. Called on the
 * engine thread; must be quick and never block.
 */
@FunctionalInterface
public interface RoomObserver {
    /** The client left the room: unsubscribed, or evicted ({@code clientTimeout(client, room)} in the original). */
    void memberEjected(String room, ClientId client, EjectReason reason);
}
