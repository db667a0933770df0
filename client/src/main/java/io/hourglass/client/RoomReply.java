package io.hourglass.client;

import java.util.Objects;

/**
 * The server's answer to a session request ({@link RoomSession#subscribe},
 * {@link RoomSession#unsubscribe}, {@link RoomSession#ack}).
 *
 * @param outcome what happened, one of the constants below (the server may add others)
 * @param ok false when the request changed nothing (a duplicate or stale ack, a repeated
 *     subscribe, an unsubscribe of a room the session was not in)
 */
public record RoomReply(String outcome, boolean ok) {
    public static final String SUBSCRIBED = "SUBSCRIBED";
    public static final String ALREADY_SUBSCRIBED = "ALREADY_SUBSCRIBED";
    public static final String UNSUBSCRIBED = "UNSUBSCRIBED";
    public static final String NOT_SUBSCRIBED = "NOT_SUBSCRIBED";
    public static final String ACKED = "ACKED";
    public static final String DUPLICATE = "DUPLICATE";
    public static final String NOT_MEMBER = "NOT_MEMBER";
    public static final String OUT_OF_BAND = "OUT_OF_BAND";
    public static final String NOT_IN_FLIGHT = "NOT_IN_FLIGHT";
    public static final String UNKNOWN_MESSAGE = "UNKNOWN_MESSAGE";
    public static final String UNKNOWN_CLIENT = "UNKNOWN_CLIENT";
    public static final String OK = "OK";
    /** A malformed request (a bad room name, ...); futures fail with {@link InvalidRequestException}. */
    public static final String INVALID_ARGUMENT = "INVALID_ARGUMENT";

    public RoomReply {
        Objects.requireNonNull(outcome, "outcome");
    }
}
