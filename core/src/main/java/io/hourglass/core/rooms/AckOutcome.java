package io.hourglass.core.rooms;

/** What an ack did; everything but {@link #ACKED} means it changed nothing, and says why. */
public enum AckOutcome {
    /** The member is now ready for the next message. */
    ACKED,
    /** The member had already acked this message (or joined after it was released). */
    DUPLICATE,
    /** The client is not a sync member of the room (never joined, left, evicted, or async). */
    NOT_MEMBER,
    /** The id names an out-of-band message; those are never acked. */
    OUT_OF_BAND,
    /** The id is one of this room's messages, but not the one in flight (stale, or not released yet). */
    NOT_IN_FLIGHT,
    /** The id is malformed or belongs to another room. */
    UNKNOWN_MESSAGE,
    /** The client id is unknown here (never issued by this leader, disconnected, or evicted). */
    UNKNOWN_CLIENT
}
