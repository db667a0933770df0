package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class DurationConverterTest {
    @Test
    void readsSingleUnitsAndSums() {
        assertEquals(Duration.ofMillis(500), DurationConverter.parse("500ms"));
        assertEquals(Duration.ofSeconds(5), DurationConverter.parse("5s"));
        assertEquals(Duration.ofMinutes(1), DurationConverter.parse("1m"));
        assertEquals(Duration.ofHours(2), DurationConverter.parse("2h"));
        assertEquals(Duration.ofDays(1), DurationConverter.parse("1d"));
        assertEquals(Duration.ofSeconds(90), DurationConverter.parse("1m30s"));
        assertEquals(Duration.ofMillis(1_500), DurationConverter.parse("1s500ms"));
        assertEquals(Duration.ZERO, DurationConverter.parse("0"));
        assertEquals(Duration.ZERO, DurationConverter.parse("0s"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "5", "5x", "1.5s", "-1s", "s", "5 s", "1m30", "ms", "5S", "99999999999999999999d"})
    void refusesAnythingElse(String text) {
        assertThrows(CommandLine.TypeConversionException.class, () -> DurationConverter.parse(text));
    }

    @Test
    void writesTheSameSyntax() {
        assertEquals("500ms", DurationConverter.format(Duration.ofMillis(500)));
        assertEquals("5s", DurationConverter.format(Duration.ofSeconds(5)));
        assertEquals("1m", DurationConverter.format(Duration.ofMinutes(1)));
        assertEquals("1m30s", DurationConverter.format(Duration.ofSeconds(90)));
        assertEquals("2h", DurationConverter.format(Duration.ofHours(2)));
        assertEquals("0s", DurationConverter.format(Duration.ZERO));
        for (String s : new String[] {"1d2h3m4s5ms", "1h1ms", "59s999ms"}) {
            assertEquals(s, DurationConverter.format(DurationConverter.parse(s)));
        }
    }
}
