package io.hourglass.core.config;

import io.hourglass.core.HourglassException;

/** A configuration value is missing or wrong; the message names the key. */
public final class ConfigException extends HourglassException {
    public ConfigException(String message) {
        super(message);
    }
}
