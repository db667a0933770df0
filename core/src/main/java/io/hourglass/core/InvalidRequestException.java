package io.hourglass.core;

/** The request itself is wrong (maps to INVALID_ARGUMENT); retrying it unchanged cannot help. */
public final class InvalidRequestException extends HourglassException {
    public InvalidRequestException(String message) {
        super(message);
    }
}
