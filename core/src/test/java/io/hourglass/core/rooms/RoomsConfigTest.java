package io.hourglass.core.rooms;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.config.ConfigException;
import io.hourglass.core.config.RoomsConfig;
import io.hourglass.core.config.Settings;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class RoomsConfigTest {
    @Test
    void defaultsWhenNothingIsSet() {
        RoomsConfig c = RoomsConfig.from(Settings.empty());
        assertEquals(RoomsConfig.DEFAULTS, c);
        assertEquals(Duration.ofSeconds(30), c.clientTimeout());
        assertTrue(c.housekeepingInterval().compareTo(c.clientTimeout().dividedBy(2)) <= 0);
    }

    @Test
    void keysAreReadAndValidated() {
        RoomsConfig c = RoomsConfig.from(new Settings(Map.of("rooms.clientTimeout", "2s",
                "rooms.housekeepingInterval", "100ms", "rooms.resubscribeGrace", "0ms")));
        assertEquals(new RoomsConfig(Duration.ofSeconds(2), Duration.ofMillis(100), Duration.ZERO), c);
        ConfigException e = assertThrows(ConfigException.class,
                () -> RoomsConfig.from(new Settings(Map.of("rooms.clientTimeout", "500ms"))));
        assertTrue(e.getMessage().contains("rooms.clientTimeout"), e.getMessage());
        assertThrows(ConfigException.class,
                () -> RoomsConfig.from(new Settings(Map.of("rooms.housekeepingInterval", "1s"))));
        assertThrows(ConfigException.class,
                () -> new RoomsConfig(Duration.ofSeconds(1), Duration.ofMillis(100), Duration.ofSeconds(-1)));
    }
}
