package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class TimeConverterTest {
    private static final long NOW = 1_796_000_000_000L;
    private final TimeConverter times = new TimeConverter(Clock.fixed(Instant.ofEpochMilli(NOW), ZoneOffset.UTC));

    @Test
    void readsNowRelativeTimesEpochMillisAndInstants() {
        assertEquals(NOW, times.convert("now"));
        assertEquals(NOW + 3_600_000, times.convert("now+1h"));
        assertEquals(NOW + 90_000, times.convert("+1m30s"));
        assertEquals(NOW - 300_000, times.convert("now-5m"));
        assertEquals(1_700_000_000_000L, times.convert("1700000000000"));
        assertEquals(Instant.parse("2026-12-03T15:00:00Z").toEpochMilli(), times.convert("2026-12-03T15:00:00Z"));
    }

    @Test
    void anythingElseIsAUsageErrorQuotingAShortPrefix() {
        CommandLine.TypeConversionException e = assertThrows(CommandLine.TypeConversionException.class,
                () -> times.convert("yesterday-" + "x".repeat(500)));
        assertTrue(e.getMessage().length() < 400, e.getMessage());
        assertThrows(CommandLine.TypeConversionException.class, () -> times.convert("+soon"));
    }
}
