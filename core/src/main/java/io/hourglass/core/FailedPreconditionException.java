package io.hourglass.core;

/**
 * The request is well formed but the system is not in a state to carry it out, e.g. removing the
 * leader before leadership moved (maps to FAILED_PRECONDITION). The message says what must change
 * first; retrying before that cannot help.
 */
public final class FailedPreconditionException extends HourglassException {
    public FailedPreconditionException(String message) {
        super(message);
    }
}
