package io.hourglass.core.rooms;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A connected client on the room leader: its id, its sink, its heartbeat timeout and its
 * subscriptions. Engine thread only.
 */
final class ClientSession {
    final ClientId id;
    final RoomSink sink;
    final long timeoutMs;
    /** Room → mode of this client's subscription there; mirrors the gates. */
    final Map<String, SubscriptionMode> rooms = new LinkedHashMap<>();

    ClientSession(ClientId id, RoomSink sink, long timeoutMs) {
        this.id = id;
        this.sink = sink;
        this.timeoutMs = timeoutMs;
    }

    @Override
    public String toString() {
        return "client " + id;
    }
}
