package io.hourglass.core.rooms;

/** What a subscribe did. */
public enum SubscribeOutcome {
    SUBSCRIBED,
    /** The client already had a subscription to the room (in either mode); nothing changed. */
    ALREADY_SUBSCRIBED,
    /** The client id is unknown here (never issued by this leader, disconnected, or evicted). */
    UNKNOWN_CLIENT
}
