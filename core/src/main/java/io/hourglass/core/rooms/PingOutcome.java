package io.hourglass.core.rooms;

/** What a ping did. */
public enum PingOutcome {
    /** The last-seen time of every sync membership of the client is now. */
    OK,
    /** The client id is unknown here; a ping does not revive an evicted client, it must connect again. */
    UNKNOWN_CLIENT
}
