package io.hourglass.core.security;

import io.hourglass.core.InvalidRequestException;
import java.util.Locale;

/** What a grant allows on its resource (DESIGN §8). */
public enum Permission {
    /** Publish to a topic. */
    PUBLISH,
    /** Subscribe to a topic, acknowledge its messages. */
    CONSUME,
    /** Join, send to and acknowledge in a room. */
    ROOMS,
    /** Administer: membership, purge, groups, snapshots, tokens and grants. */
    ADMIN;

    /** The name in grants, the CLI and error messages. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Permission parse(String text) {
        try {
            return valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidRequestException("unknown permission '" + io.hourglass.core.HourglassException.excerpt(text)
                    + "': use publish, consume, rooms or admin");
        }
    }
}
