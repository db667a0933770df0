package io.hourglass.client;

/**
 * Root of the client library's unchecked exceptions.
 *
 * <p>Thrown by the synchronous methods of {@link HourglassClient} and used to complete the
 * futures of the asynchronous ones. Subclasses say what the caller can do about it:
 * {@link InvalidRequestException} (fix the input, never retried), {@link UnavailableException}
 * (no server answered in time; retrying later may work). Other failures — an internal server
 * error, a closed client — are reported as this type itself.
 */
public class HourglassClientException extends RuntimeException {
    private final String serverMessage;

    public HourglassClientException(String message) {
        this(message, "", null);
    }

    public HourglassClientException(String message, Throwable cause) {
        this(message, "", cause);
    }

    /**
     * @param message what happened, readable on one line
     * @param serverMessage the server's own description of the error, or empty if the error
     *     did not come from a server
     * @param cause the underlying exception, may be null
     */
    public HourglassClientException(String message, String serverMessage, Throwable cause) {
        super(message, cause);
        this.serverMessage = serverMessage == null ? "" : serverMessage;
    }

    /** The server's description of the error (the gRPC status description); empty if none. */
    public String serverMessage() {
        return serverMessage;
    }
}
