package io.hourglass.core.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Values derived from a key's declaration, for tests that run over every key (shared through the
 * test-jar): values just outside its bounds, and a valid value other than its default.
 */
public final class ConfigKeySamples {
    private ConfigKeySamples() {
    }

    /** Values just outside the key's bounds, and one its type cannot parse; none for text and flags. */
    public static List<String> outOfBounds(ConfigKey<?> key) {
        List<String> bad = new ArrayList<>();
        if (key.type() == Integer.class) {
            key.min().map(Integer.class::cast).filter(m -> m > Integer.MIN_VALUE).ifPresent(m -> bad.add(m - 1 + ""));
            key.max().map(Integer.class::cast).ifPresent(m -> bad.add((long) m + 1 + ""));
            bad.add("lots");
        } else if (key.type() == Duration.class) {
            key.min().map(Duration.class::cast).ifPresent(m -> bad.add(m.toMillis() - 1 + "ms"));
            key.max().map(Duration.class::cast).ifPresent(m -> bad.add(m.toMillis() + 1 + "ms"));
            bad.add("soon");
        }
        return bad;
    }

    /** A value within the bounds that is not the default (text keys: the default with "x" appended). */
    public static String otherValid(ConfigKey<?> key) {
        Object d = key.defaultValue();
        if (d instanceof Integer n) {
            Optional<Integer> max = key.max().map(Integer.class::cast);
            return String.valueOf(max.isPresent() && n.equals(max.get()) ? n - 1 : n + 1);
        }
        if (d instanceof Duration t) {
            Optional<Duration> max = key.max().map(Duration.class::cast);
            Duration step = Duration.ofMillis(1);
            return (max.isPresent() && t.equals(max.get()) ? t.minus(step) : t.plus(step)).toMillis() + "ms";
        }
        if (d instanceof Boolean b) {
            return String.valueOf(!b);
        }
        return d + "x";
    }
}
