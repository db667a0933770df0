package io.hourglass.server.config;

import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.ConfigSection;
import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.config.LimitsConfig;
import io.hourglass.core.config.RoomsConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The registry of every configuration key a node reads, in the sections and order of the configuration
 * reference. Each key is declared once, next to the record that reads it; this class only lists them.
 * The environment-variable mapping resolves against it, and {@link ConfigReference} renders the docs from it.
 */
public final class KnownKeys {
    /** The node's own keys and ports, listed first. */
    private static final ConfigSection NODE = ConfigSection.of("Node", NodeConfig.ID, NodeConfig.DATA_DIR,
            NodeConfig.MIN_FREE_DISK_MB, NodeConfig.HOST, NodeConfig.BIND_HOST, NodeConfig.GRPC_PORT, HttpConfig.PORT);

    public static final List<ConfigSection> SECTIONS = List.of(NODE, RaftKeys.SECTION, DeliveryConfig.SECTION,
            LimitsConfig.SECTION, RoomsConfig.SECTION, GrpcConfig.SECTION, HttpConfig.SECTION,
            SecurityConfig.SECTION);

    /** Every key, by name, in reference order. */
    private static final Map<String, ConfigKey<?>> BY_NAME = index();

    public static final List<ConfigKey<?>> ALL = List.copyOf(BY_NAME.values());

    private KnownKeys() {
    }

    public static Optional<ConfigKey<?>> named(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    /** The key whose name equals {@code name} but for case, e.g. {@code delivery.inflighttimeout}. */
    public static Optional<ConfigKey<?>> namedIgnoringCase(String name) {
        return ALL.stream().filter(k -> k.name().equalsIgnoreCase(name)).findFirst();
    }

    /**
     * One line for each name in {@code names} that is no key, e.g. a typo in the config file:
     * {@code unknown config key delivery.inflightTimeout (ignored); did you mean delivery.inFlightTimeout?}.
     */
    public static List<String> unknown(Iterable<String> names) {
        List<String> lines = new ArrayList<>();
        for (String name : names) {
            if (!BY_NAME.containsKey(name)) {
                lines.add("unknown config key " + name + " (ignored)"
                        + namedIgnoringCase(name).map(k -> "; did you mean " + k.name() + "?").orElse(""));
            }
        }
        return lines;
    }

    private static Map<String, ConfigKey<?>> index() {
        Map<String, ConfigKey<?>> byName = new LinkedHashMap<>();
        Map<String, String> byLowerCase = new LinkedHashMap<>();
        for (ConfigSection section : SECTIONS) {
            for (ConfigKey<?> key : section.keys()) {
                // Environment variables name keys case-insensitively: two keys that differ only in case could not
                // both be set that way.
                String clash = byLowerCase.put(key.name().toLowerCase(Locale.ROOT), key.name());
                if (byName.put(key.name(), key) != null || clash != null) {
                    throw new IllegalStateException("config key " + key.name() + " is listed twice");
                }
            }
        }
        return byName;
    }
}
