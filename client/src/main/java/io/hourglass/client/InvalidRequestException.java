package io.hourglass.client;

/**
 * The server refused a request as invalid (gRPC {@code INVALID_ARGUMENT} and its kin): a bad
 * topic, a negative delay, an ACK for a tag it never delivered on that stream. Retrying the
 * same request cannot succeed, so the client never does.
 */
public final class InvalidRequestException extends HourglassClientException {
    public InvalidRequestException(String message, String serverMessage, Throwable cause) {
        super(message, serverMessage, cause);
    }
}
