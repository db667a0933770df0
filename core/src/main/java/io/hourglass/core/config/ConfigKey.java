package io.hourglass.core.config;

import java.time.Duration;
import java.util.Comparator;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One configuration key, declared once: name, type, default, bounds and a one-line description.
 * The {@code *Config.from(Settings)} methods read through these declarations, the server's key
 * registry lists them, and the configuration reference is rendered from them, so a default or a
 * bound is written in exactly one place.
 *
 * <p>The default is written as an operator would write it in {@code hourglass.properties}
 * ({@code "500ms"}, {@code "1024"}) and parsed — with the same checks as any configured value — when
 * the key is declared: a declaration whose default is out of its own bounds fails at class load.
 *
 * <p>Every error is one line that starts with the key's name. Immutable and thread-safe.
 *
 * @param <T> the type of the value: {@link Integer}, {@link Duration}, {@link String} or {@link Boolean}
 */
public final class ConfigKey<T> {
    private final String name;
    private final Class<T> type;
    private final Function<String, T> parse;
    private final Function<T, String> format;
    private final Comparator<T> order;
    /** Inclusive bounds, null where the key has none. */
    private final T min;
    private final T max;
    /** Bounds as written in the declaration, for docs and errors; null where the key has none. */
    private final String minText;
    private final String maxText;
    /** A check beyond the bounds (a list's syntax); throws {@link ConfigException} or IllegalArgumentException. */
    private final Consumer<T> check;
    private final String defaultText;
    private final T defaultValue;
    private final String doc;

    private ConfigKey(String name, Class<T> type, Function<String, T> parse, Function<T, String> format,
                      Comparator<T> order, String minText, String maxText, Consumer<T> check, String defaultText,
                      String doc) {
        this.name = requireName(name);
        this.type = type;
        this.parse = parse;
        this.format = format;
        this.order = order;
        this.minText = minText;
        this.maxText = maxText;
        this.min = minText == null ? null : parseRaw(minText);
        this.max = maxText == null ? null : parseRaw(maxText);
        this.check = check;
        this.doc = Objects.requireNonNull(doc, "doc");
        this.defaultText = defaultText;
        this.defaultValue = parse(defaultText);
    }

    /** A whole number between {@code min} and {@code max} inclusive ({@link Integer#MAX_VALUE}: no upper bound). */
    public static ConfigKey<Integer> integer(String name, int defaultValue, int min, int max, String doc) {
        return new ConfigKey<>(name, Integer.class, ConfigKey::parseInt, String::valueOf, Comparator.naturalOrder(),
                String.valueOf(min), max == Integer.MAX_VALUE ? null : String.valueOf(max), v -> { },
                String.valueOf(defaultValue), doc);
    }

    /** A duration of at least {@code min} ({@code "500ms"}, {@code "5s"}, ...); no upper bound. */
    public static ConfigKey<Duration> duration(String name, String defaultValue, String min, String doc) {
        return duration(name, defaultValue, min, null, doc);
    }

    /** A duration between {@code min} and {@code max} inclusive; {@code max} null for no upper bound. */
    public static ConfigKey<Duration> duration(String name, String defaultValue, String min, String max, String doc) {
        return new ConfigKey<>(name, Duration.class, Settings::parseDuration, Settings::format,
                Comparator.naturalOrder(), Objects.requireNonNull(min, "min"), max, v -> { }, defaultValue, doc);
    }

    /** Free text, trimmed; {@code check} refuses malformed values (it may throw IllegalArgumentException). */
    public static ConfigKey<String> string(String name, String defaultValue, Consumer<String> check, String doc) {
        return new ConfigKey<>(name, String.class, String::trim, s -> s, Comparator.naturalOrder(), null, null,
                check, defaultValue, doc);
    }

    /** Free text, trimmed. */
    public static ConfigKey<String> string(String name, String defaultValue, String doc) {
        return string(name, defaultValue, v -> { }, doc);
    }

    /** {@code true} or {@code false}; like {@link Boolean#parseBoolean}, anything but {@code true} is false. */
    public static ConfigKey<Boolean> flag(String name, boolean defaultValue, String doc) {
        return new ConfigKey<>(name, Boolean.class, Boolean::parseBoolean, String::valueOf, Comparator.naturalOrder(),
                null, null, v -> { }, String.valueOf(defaultValue), doc);
    }

    public String name() {
        return name;
    }

    public Class<T> type() {
        return type;
    }

    public T defaultValue() {
        return defaultValue;
    }

    /** The default as written in a config file; empty for an empty text. */
    public String defaultText() {
        return defaultText;
    }

    public Optional<T> min() {
        return Optional.ofNullable(min);
    }

    public Optional<T> max() {
        return Optional.ofNullable(max);
    }

    /** The bounds for a reader: {@code 1 to 65536}, {@code at least 1ms}; empty for a key without bounds. */
    public String bounds() {
        if (minText != null && maxText != null) {
            return minText + " to " + maxText;
        }
        return minText != null ? "at least " + minText : maxText != null ? "at most " + maxText : "";
    }

    /** What the key is for, in one line. */
    public String doc() {
        return doc;
    }

    /** The key's value in {@code settings}, or its default where it is unset or blank. */
    public T read(Settings settings) {
        return readOr(settings, defaultValue);
    }

    /** The key's value in {@code settings}, or {@code fallback} (a default computed from other keys) where unset. */
    public T readOr(Settings settings, T fallback) {
        String text = settings.raw(name);
        return text == null || text.isBlank() ? fallback : parse(text);
    }

    /** Parses and validates one value as configured; fails with a one-line error that names the key. */
    public T parse(String text) {
        T value = parseRaw(text);
        check(value, text.trim());
        return value;
    }

    /** Validates a value built in code (a record's constructor) against the same bounds. */
    public T check(T value) {
        if (value == null) {
            throw new ConfigException(name + " must be set");
        }
        check(value, format.apply(value));
        return value;
    }

    private void check(T value, String written) {
        if ((min != null && order.compare(value, min) < 0) || (max != null && order.compare(value, max) > 0)) {
            String range = min != null && max != null ? "between " + minText + " and " + maxText
                    : min != null ? "at least " + minText : "at most " + maxText;
            throw new ConfigException(name + " must be " + range + ", got " + written);
        }
        try {
            check.accept(value);
        } catch (IllegalArgumentException | ConfigException e) {
            throw new ConfigException(name + ": " + e.getMessage());
        }
    }

    private T parseRaw(String text) {
        try {
            return parse.apply(text);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(type == Integer.class ? name + " must be a whole number, got '" + text + "'"
                    : name + ": " + e.getMessage());
        }
    }

    private static Integer parseInt(String text) {
        return Integer.parseInt(text.trim());
    }

    private static String requireName(String name) {
        if (name == null || !name.matches("[a-z]+\\.[A-Za-z]+")) {
            throw new IllegalArgumentException("a config key is section.camelCaseName, got " + name);
        }
        return name;
    }

    @Override
    public String toString() {
        return name;
    }
}
