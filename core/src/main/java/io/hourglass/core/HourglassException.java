package io.hourglass.core;

/** Root of Hourglass' unchecked domain exceptions; mapped to gRPC status in one place. */
public class HourglassException extends RuntimeException {
    public HourglassException(String message) {
        super(message);
    }

    public HourglassException(String message, Throwable cause) {
        super(message, cause);
    }
}
