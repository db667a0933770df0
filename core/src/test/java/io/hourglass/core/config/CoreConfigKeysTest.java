package io.hourglass.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every key core's records declare, derived from their sections: the default parses within the key's bounds
 * and is what the record reads when nothing is set; a value just outside the bounds is refused by the record's
 * reader with a one-line error naming the key. (The server's KnownKeysTest does the same for every key.)
 */
@Timeout(10)
class CoreConfigKeysTest {
    /** Each core section with the reader of its record. */
    private static final Map<ConfigSection, Function<Settings, Object>> READERS = Map.of(
            DeliveryConfig.SECTION, DeliveryConfig::from,
            LimitsConfig.SECTION, LimitsConfig::from,
            RoomsConfig.SECTION, RoomsConfig::from);

    static Stream<Arguments> keys() {
        return READERS.entrySet().stream().flatMap(e -> e.getKey().keys().stream()
                .map(k -> Arguments.of(k.name(), k, e.getValue())));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("keys")
    void theDefaultParsesWithinTheBoundsAndIsWhatTheRecordReads(String name, ConfigKey<?> key,
                                                                 Function<Settings, Object> reader) {
        assertEquals(key.defaultValue(), key.parse(key.defaultText()));
        assertEquals(reader.apply(Settings.empty()), reader.apply(new Settings(Map.of(name, key.defaultText()))));
        assertFalse(key.doc().isBlank(), name + " has a description");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("keys")
    void aValueOutsideTheBoundsIsRefusedNamingTheKey(String name, ConfigKey<?> key,
                                                    Function<Settings, Object> reader) {
        for (String bad : ConfigKeySamples.outOfBounds(key)) {
            ConfigException e = assertThrows(ConfigException.class,
                    () -> reader.apply(new Settings(Map.of(name, bad))), name + "=" + bad);
            assertTrue(e.getMessage().startsWith(name), e.getMessage());
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("keys")
    void anotherValidValueIsReadIntoTheRecord(String name, ConfigKey<?> key, Function<Settings, Object> reader) {
        Object changed = reader.apply(new Settings(Map.of(name, ConfigKeySamples.otherValid(key))));
        assertFalse(reader.apply(Settings.empty()).equals(changed), name + " is read by its record");
    }

    @Test
    void theRecordsDefaultsAreTheDeclaredDefaults() {
        Map<String, String> all = new HashMap<>();
        READERS.keySet().forEach(s -> s.keys().forEach(k -> all.put(k.name(), k.defaultText())));
        Settings defaults = new Settings(all);
        assertEquals(DeliveryConfig.DEFAULTS, DeliveryConfig.from(defaults));
        assertEquals(LimitsConfig.DEFAULTS, LimitsConfig.from(defaults));
        assertEquals(RoomsConfig.DEFAULTS, RoomsConfig.from(defaults));
        assertEquals(Duration.ofMillis(50), DeliveryConfig.DEFAULTS.dispatchPollInterval());
        assertEquals(1_114_112, LimitsConfig.DEFAULTS.maxMessageBytes());
    }
}
