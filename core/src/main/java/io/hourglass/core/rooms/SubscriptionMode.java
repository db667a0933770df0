package io.hourglass.core.rooms;

/** How a client takes part in a room; chosen per subscription. */
public enum SubscriptionMode {
    /** Gates the room: the next message waits for this member's ack; evicted when silent. */
    SYNC,
    /** A listener: receives every message, never gates, never acks, never evicted. */
    ASYNC
}
