package io.hourglass.core;

/**
 * The request names something this cluster does not have — a topic, group, message or member
 * (maps to NOT_FOUND). Retrying it unchanged cannot help until that thing exists.
 */
public final class NotFoundException extends HourglassException {
    public NotFoundException(String message) {
        super(message);
    }
}
