package io.hourglass.client;

/**
 * No server could serve the request in time: every configured server was unreachable, had no
 * leader, or did not answer before the deadline. The outcome of a publish that failed this way
 * is unknown (it may have been committed); with at-least-once delivery a retry is safe.
 */
public final class UnavailableException extends HourglassClientException {
    public UnavailableException(String message, String serverMessage, Throwable cause) {
        super(message, serverMessage, cause);
    }
}
