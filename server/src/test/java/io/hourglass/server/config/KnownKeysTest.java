package io.hourglass.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.config.ConfigException;
import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.ConfigKeySamples;
import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.config.LimitsConfig;
import io.hourglass.core.config.RoomsConfig;
import io.hourglass.core.config.Settings;
import io.hourglass.raft.RaftConfig;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every key of the registry, through the node's real reader ({@link NodeConfig#from}): its default parses
 * within its bounds, a value outside them stops the node with one line naming the key, another valid
 * value reaches the node's configuration (the key is wired), and its HOURGLASS_* variable sets it.
 */
@Timeout(30)
class KnownKeysTest {
    static Stream<ConfigKey<?>> keys() {
        return KnownKeys.ALL.stream();
    }

    /** Keys one can set alone: the security keys name files that must exist and go in sets (SecurityConfigTest). */
    static Stream<ConfigKey<?>> keysAlone() {
        return keys().filter(k -> !SecurityConfig.SECTION.keys().contains(k));
    }

    /** The node's configuration but the raw settings, which differ whenever anything is set. */
    private static List<Object> typed(NodeConfig c) {
        return List.of(c.dataDir(), c.host(), c.bindHost(), c.grpcPort(), c.httpPort(), c.raft(), c.delivery(),
                c.limits(), c.rooms(), c.grpc(), c.http(), c.security(), c.publishEntriesInFlight(), c.warmUp(), c.shards(),
                c.metadataGroup());
    }

    private static NodeConfig node(String key, String value) {
        return NodeConfig.from(new Settings(Map.of(key, value)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("keys")
    void theDefaultParsesWithinTheBoundsAndIsWhatTheNodeReads(ConfigKey<?> key) {
        assertEquals(key.defaultValue(), key.parse(key.defaultText()));
        assertEquals(typed(NodeConfig.from(Settings.empty())), typed(node(key.name(), key.defaultText())));
        assertFalse(key.doc().isBlank() || key.doc().contains("\n"), key + " has a one-line description");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("keys")
    void aValueOutsideTheBoundsIsRefusedWithOneLineNamingTheKey(ConfigKey<?> key) {
        List<String> bad = key == RaftKeys.PEERS ? List.of("n1=localhost", "n1=h:1:x")
                : ConfigKeySamples.outOfBounds(key);
        for (String value : bad) {
            ConfigException e = assertThrows(ConfigException.class, () -> node(key.name(), value), key + "=" + value);
            assertTrue(e.getMessage().startsWith(key.name()), e.getMessage());
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("keysAlone")
    void anotherValidValueReachesTheNodesConfiguration(ConfigKey<?> key) {
        String value = key == RaftKeys.PEERS ? "n1=127.0.0.1:7071:7070" : ConfigKeySamples.otherValid(key);
        assertNotEquals(typed(NodeConfig.from(Settings.empty())), typed(node(key.name(), value)), key + "=" + value);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("keys")
    void itsEnvironmentVariableSetsIt(ConfigKey<?> key) {
        String env = "HOURGLASS_" + key.name().replace('.', '_').toUpperCase(Locale.ROOT);
        assertEquals(key.name(), ConfigLoader.keyForEnv(env));
    }

    @Test
    void everyKeyDeclaredInAConfigClassIsRegistered() throws IllegalAccessException {
        for (Class<?> c : List.of(NodeConfig.class, RaftKeys.class, DeliveryConfig.class, LimitsConfig.class,
                RoomsConfig.class, GrpcConfig.class, HttpConfig.class, SecurityConfig.class)) {
            for (Field f : c.getFields()) {
                if (Modifier.isStatic(f.getModifiers()) && f.getType() == ConfigKey.class) {
                    ConfigKey<?> key = (ConfigKey<?>) f.get(null);
                    assertEquals(key, KnownKeys.named(key.name()).orElse(null), c.getSimpleName() + "." + f.getName());
                }
            }
        }
    }

    @Test
    void anUnknownKeyIsReportedWithTheKeyItProbablyMeant() {
        assertEquals(List.of("unknown config key delivery.inflighttimeout (ignored); did you mean "
                        + "delivery.inFlightTimeout?", "unknown config key delivery.speed (ignored)"),
                KnownKeys.unknown(List.of("delivery.inflighttimeout", "grpc.port", "delivery.speed")));
        assertEquals(List.of(), KnownKeys.unknown(KnownKeys.ALL.stream().map(ConfigKey::name).toList()));
        assertTrue(KnownKeys.named("delivery.speed").isEmpty());
        assertEquals(null, ConfigLoader.keyForEnv("HOURGLASS_SERVERS"));
    }

    @Test
    void theRaftModulesOwnReaderAgreesWithTheDeclarations() {
        // RaftConfig.from (raft's tests build their nodes with it) still spells the raft defaults itself.
        Path dataDir = Path.of("data").toAbsolutePath();
        Settings s = new Settings(Map.of("raft.port", "7171", "raft.requestTimeout", "3s"));
        assertEquals(RaftConfig.from(Settings.empty(), dataDir, 7070),
                RaftKeys.read(Settings.empty(), NodeConfig.ID.defaultValue(), dataDir, null));
        assertEquals(RaftConfig.from(s, dataDir, 7070), RaftKeys.read(s, NodeConfig.ID.defaultValue(), dataDir, null));
    }
}
