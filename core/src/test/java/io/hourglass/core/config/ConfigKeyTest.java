package io.hourglass.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A declared key parses, bounds and reports errors the same way for every record that reads it. */
@Timeout(10)
class ConfigKeyTest {
    private static final ConfigKey<Integer> COUNT = ConfigKey.integer("test.count", 8, 1, 64, "A count.");
    private static final ConfigKey<Integer> UNBOUNDED = ConfigKey.integer("test.entries", 100, 10,
            Integer.MAX_VALUE, "Entries.");
    private static final ConfigKey<Duration> PAUSE = ConfigKey.duration("test.pause", "250ms", "1ms", "500ms",
            "A pause.");
    private static final ConfigKey<Duration> TIMEOUT = ConfigKey.duration("test.timeout", "5s", "100ms",
            "A timeout.");
    private static final ConfigKey<String> LIST = ConfigKey.string("test.list", "", v -> {
        if (!v.isEmpty() && !v.matches("[a-z,]+")) {
            throw new IllegalArgumentException("'" + v + "' is not a list of names");
        }
    }, "Names.");
    private static final ConfigKey<Boolean> FLAG = ConfigKey.flag("test.flag", false, "A flag.");

    private static Settings with(String key, String value) {
        return new Settings(Map.of(key, value));
    }

    private static String refusal(ConfigKey<?> key, String value) {
        String message = assertThrows(ConfigException.class, () -> key.read(with(key.name(), value))).getMessage();
        assertTrue(message.startsWith(key.name() + " ") || message.startsWith(key.name() + ":"), message);
        assertFalse(message.contains("\n"), message);
        return message;
    }

    @Test
    void unsetOrBlankIsTheDefaultParsedFromItsText() {
        assertEquals(8, COUNT.read(Settings.empty()));
        assertEquals(8, COUNT.read(with("test.count", "  ")));
        assertEquals(Duration.ofMillis(250), PAUSE.defaultValue());
        assertEquals("250ms", PAUSE.defaultText());
        assertEquals("", LIST.read(Settings.empty()));
        assertFalse(FLAG.read(Settings.empty()));
    }

    @Test
    void configuredValuesAreTrimmedAndParsed() {
        assertEquals(64, COUNT.read(with("test.count", " 64 ")));
        assertEquals(Duration.ofSeconds(90), TIMEOUT.read(with("test.timeout", "1m30s")));
        assertEquals("a,b", LIST.read(with("test.list", " a,b ")));
        assertTrue(FLAG.read(with("test.flag", "TRUE")));
        assertFalse(FLAG.read(with("test.flag", "yes")), "like Boolean.parseBoolean, as before keys were declared");
    }

    @Test
    void valuesOutOfBoundsAreRefusedWithOneLineNamingTheKey() {
        assertEquals("test.count must be between 1 and 64, got 65", refusal(COUNT, "65"));
        assertEquals("test.count must be between 1 and 64, got 0", refusal(COUNT, "0"));
        assertEquals("test.count must be a whole number, got 'many'", refusal(COUNT, "many"));
        assertEquals("test.entries must be at least 10, got 9", refusal(UNBOUNDED, "9"));
        assertEquals("test.timeout must be at least 100ms, got 99ms", refusal(TIMEOUT, "99ms"));
        assertEquals("test.pause must be between 1ms and 500ms, got 501ms", refusal(PAUSE, "501ms"));
        assertEquals("test.pause: '5x' is not a duration (write e.g. 500ms, 5s, 1m, 2h)", refusal(PAUSE, "5x"));
        assertEquals("test.list: 'A;B' is not a list of names", refusal(LIST, "A;B"));
    }

    @Test
    void checkHoldsValuesBuiltInCodeToTheSameBounds() {
        assertEquals(Duration.ofMillis(500), PAUSE.check(Duration.ofMillis(500)));
        ConfigException e = assertThrows(ConfigException.class, () -> PAUSE.check(Duration.ofSeconds(1)));
        assertEquals("test.pause must be between 1ms and 500ms, got 1s", e.getMessage());
        assertEquals("test.pause must be set", assertThrows(ConfigException.class, () -> PAUSE.check(null))
                .getMessage());
    }

    @Test
    void readOrFallsBackToADefaultComputedFromOtherKeys() {
        assertEquals(12, COUNT.readOr(Settings.empty(), 12));
        assertEquals(3, COUNT.readOr(with("test.count", "3"), 12));
    }

    @Test
    void boundsAreWrittenForAReader() {
        assertEquals("1 to 64", COUNT.bounds());
        assertEquals("at least 10", UNBOUNDED.bounds());
        assertEquals("1ms to 500ms", PAUSE.bounds());
        assertEquals("at least 100ms", TIMEOUT.bounds());
        assertEquals("", LIST.bounds());
        assertEquals(Duration.ofMillis(1), PAUSE.min().orElseThrow());
        assertTrue(UNBOUNDED.max().isEmpty());
    }

    @Test
    void aDeclarationWhoseDefaultBreaksItsOwnBoundsFailsAtOnce() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigKey.duration("test.bad", "1s", "1ms", "500ms", "Bad."));
        assertEquals("test.bad must be between 1ms and 500ms, got 1s", e.getMessage());
        assertThrows(ConfigException.class, () -> ConfigKey.integer("test.bad", 0, 1, 2, "Bad."));
        assertThrows(IllegalArgumentException.class, () -> ConfigKey.integer("no-section", 1, 1, 2, "Bad."));
    }

    @Test
    void settingsGettersWithoutADeclarationValidateTheSameWay() {
        Settings s = with("test.count", "0");
        ConfigException e = assertThrows(ConfigException.class, () -> s.integer("test.count", 8, 1, 64));
        assertEquals("test.count must be between 1 and 64, got 0", e.getMessage());
        assertEquals(Duration.ofSeconds(1), Settings.empty().duration("test.pause", Duration.ofSeconds(1),
                Duration.ofMillis(100)));
        assertTrue(s.isSet(COUNT));
        assertFalse(Settings.empty().isSet(COUNT));
    }
}
