package io.hourglass.client;

/**
 * The server refused the caller (gRPC {@code UNAUTHENTICATED}: no, wrong or revoked credentials;
 * {@code PERMISSION_DENIED}: the principal lacks the permission the message names). Retrying with
 * the same credentials cannot succeed, so the client never does.
 */
public final class AccessDeniedException extends HourglassClientException {
    public AccessDeniedException(String message, String serverMessage, Throwable cause) {
        super(message, serverMessage, cause);
    }
}
