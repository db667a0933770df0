package io.hourglass.core.config;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Flat {@code key=value} settings, already merged from file, environment and flags by the
 * server's loader. Typed getters parse and validate; a bad value fails with the key in the message.
 */
public final class Settings {
    private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)");
    private final Map<String, String> values;

    public Settings(Map<String, String> values) {
        this.values = new TreeMap<>(values);
    }

    public static Settings empty() {
        return new Settings(Map.of());
    }

    public Map<String, String> asMap() {
        return Map.copyOf(values);
    }

    /** The value of {@code key} as configured, untrimmed; null where it is not set. */
    String raw(String key) {
        return values.get(key);
    }

    /** Whether {@code key} has a non-blank value. */
    public boolean isSet(ConfigKey<?> key) {
        String v = values.get(key.name());
        return v != null && !v.isBlank();
    }

    // The getters below serve callers that have no ConfigKey declaration (RaftConfig.from); they parse and
    // validate exactly as a declared key does.

    public String string(String key, String defaultValue) {
        String v = values.get(key);
        return v == null || v.isBlank() ? defaultValue : v.trim();
    }

    public int integer(String key, int defaultValue, int min, int max) {
        return ConfigKey.integer(key, defaultValue, min, max, "").read(this);
    }

    public Duration duration(String key, Duration defaultValue, Duration min) {
        return ConfigKey.duration(key, format(defaultValue), format(min), "").read(this);
    }

    /** Parses {@code 500ms}, {@code 5s}, {@code 1m}, {@code 2h}, {@code 1d}, or a sum such as {@code 1m30s}. */
    public static Duration parseDuration(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        Matcher m = DURATION.matcher(s);
        Duration total = Duration.ZERO;
        int at = 0;
        while (m.find() && m.start() == at) {
            long n = Long.parseLong(m.group(1));
            total = total.plus(switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            });
            at = m.end();
        }
        if (at == 0 || at != s.length()) {
            throw new IllegalArgumentException("'" + text + "' is not a duration (write e.g. 500ms, 5s, 1m, 2h)");
        }
        return total;
    }

    /** Writes a duration the way the CLI and config files spell them: {@code 500ms}, {@code 5s}, {@code 1m}. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0 && ms > 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0 && ms > 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0 && ms > 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }
}
