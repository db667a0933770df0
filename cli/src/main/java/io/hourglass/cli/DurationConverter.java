package io.hourglass.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Durations as the CLI writes and reads them: a sum of {@code <integer><unit>} terms with units
 * {@code ms}, {@code s}, {@code m}, {@code h}, {@code d} — {@code 500ms}, {@code 5s},
 * {@code 1m30s}, {@code 2h} — or a bare {@code 0}. Anything else is a usage error (exit 2).
 */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    private static final Pattern TERM = Pattern.compile("(\\d+)(ms|s|m|h|d)");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /** A duration that must be more than zero; the error quotes it as the user wrote it. */
    static final class Positive implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            Duration d = parse(value);
            if (d.isZero()) {
                throw new CommandLine.TypeConversionException("'" + value + "' must be more than zero");
            }
            return d;
        }
    }

    /** @throws CommandLine.TypeConversionException if {@code text} is not a duration */
    static Duration parse(String text) {
        String s = text == null ? "" : text.strip();
        if (s.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = TERM.matcher(s);
        long millis = 0;
        int end = 0;
        try {
            while (m.lookingAt()) {
                long amount = Long.parseLong(m.group(1));
                millis = Math.addExact(millis, Math.multiplyExact(amount, unitMillis(m.group(2))));
                end = m.end();
                m.region(end, s.length());
            }
        } catch (ArithmeticException | NumberFormatException e) {
            throw invalid(text);
        }
        if (end == 0 || end != s.length()) {
            throw invalid(text);
        }
        return Duration.ofMillis(millis);
    }

    /** Writes {@code d} in the same syntax, largest units first: {@code 1m30s}, {@code 500ms}. */
    static String format(Duration d) {
        long ms = d.toMillis();
        if (ms == 0) {
            return "0s";
        }
        StringBuilder sb = new StringBuilder(ms < 0 ? "-" : "");
        ms = Math.abs(ms);
        long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1_000L, 1L};
        String[] units = {"d", "h", "m", "s", "ms"};
        for (int i = 0; i < sizes.length; i++) {
            if (ms >= sizes[i]) {
                sb.append(ms / sizes[i]).append(units[i]);
                ms %= sizes[i];
            }
        }
        return sb.toString();
    }

    private static long unitMillis(String unit) {
        return switch (unit) {
            case "ms" -> 1L;
            case "s" -> 1_000L;
            case "m" -> 60_000L;
            case "h" -> 3_600_000L;
            case "d" -> 86_400_000L;
            default -> throw new IllegalStateException(unit);
        };
    }

    private static CommandLine.TypeConversionException invalid(String text) {
        return new CommandLine.TypeConversionException("'" + text
                + "' is not a duration (write e.g. 500ms, 5s, 1m30s, 2h)");
    }
}
