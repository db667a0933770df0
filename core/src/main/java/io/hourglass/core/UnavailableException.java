package io.hourglass.core;

/** Replication could not complete in time (no quorum, shutting down); the client may retry. */
public final class UnavailableException extends HourglassException {
    public UnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
