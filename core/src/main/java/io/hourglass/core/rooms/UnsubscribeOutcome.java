package io.hourglass.core.rooms;

/** What an unsubscribe did. */
public enum UnsubscribeOutcome {
    UNSUBSCRIBED,
    /** The client had no subscription to the room; nothing changed. */
    NOT_SUBSCRIBED,
    /** The client id is unknown here (never issued by this leader, disconnected, or evicted). */
    UNKNOWN_CLIENT
}
