package io.hourglass.cli;

import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import picocli.CommandLine;

/**
 * Points in time as options take them: {@code now}, {@code now+D} / {@code now-D} or {@code +D}
 * (a {@link DurationConverter} duration from now), epoch milliseconds, or an ISO-8601 instant
 * ({@code 2026-12-03T15:00:00Z}). Converted to epoch milliseconds; anything else is a usage error.
 */
final class TimeConverter implements CommandLine.ITypeConverter<Long> {
    private final Clock clock;

    TimeConverter() {
        this(Clock.systemUTC());
    }

    TimeConverter(Clock clock) {
        this.clock = clock;
    }

    @Override
    public Long convert(String value) {
        String s = value == null ? "" : value.strip();
        long now = clock.millis();
        if (s.equals("now")) {
            return now;
        }
        String rest = s.startsWith("now") ? s.substring(3) : s;
        if (rest.startsWith("+") || rest.startsWith("-") && !rest.substring(1).chars().allMatch(Character::isDigit)) {
            long d = DurationConverter.parse(rest.substring(1)).toMillis();
            return rest.startsWith("+") ? now + d : now - d;
        }
        if (!s.isEmpty() && s.chars().allMatch(Character::isDigit) && s.length() <= 15) {
            return Long.parseLong(s);
        }
        try {
            return Instant.parse(s).toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new CommandLine.TypeConversionException("'" + AdminSupport.shorten(s)
                    + "' is not a time: now, now+1h, +30m, epoch milliseconds or 2026-12-03T15:00:00Z");
        }
    }
}
