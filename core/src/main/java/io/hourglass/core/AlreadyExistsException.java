package io.hourglass.core;

/**
 * The request would create something that exists already, e.g. adding a member twice (maps to
 * ALREADY_EXISTS). Nothing was changed; a client retrying a create may read it as "done before".
 */
public final class AlreadyExistsException extends HourglassException {
    public AlreadyExistsException(String message) {
        super(message);
    }
}
