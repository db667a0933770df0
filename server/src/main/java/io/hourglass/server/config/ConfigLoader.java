package io.hourglass.server.config;

import io.hourglass.core.config.ConfigException;
import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.Settings;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Merges the node's settings: {@link #PRECEDENCE}. {@code HOURGLASS_*} environment variables map to
 * keys case-insensitively ({@code HOURGLASS_DELIVERY_INFLIGHTTIMEOUT} → {@code delivery.inFlightTimeout});
 * variables that name no known key ({@code HOURGLASS_SERVERS}, ...) are ignored. The only class that
 * reads files and the environment.
 */
public final class ConfigLoader {
    /** The one statement of the order, which --help, the shipped config file and the docs repeat. */
    public static final String PRECEDENCE = "command-line flags override HOURGLASS_* environment variables, "
            + "which override the config file (--config), which overrides the built-in defaults.";

    private ConfigLoader() {
    }

    public static Settings load(Path file, Map<String, String> env, Map<String, String> flags) {
        Map<String, String> merged = new HashMap<>();
        if (file != null) {
            merged.putAll(readFile(file));
        }
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (e.getKey().startsWith("HOURGLASS_")) {
                String key = keyForEnv(e.getKey());
                if (key != null) {
                    merged.put(key, e.getValue());
                }
            }
        }
        merged.putAll(flags);
        return new Settings(merged);
    }

    /** The config key an environment variable sets, or null for variables that are not config (HOURGLASS_SERVERS, ...). */
    static String keyForEnv(String env) {
        String dotted = env.substring("HOURGLASS_".length()).replace('_', '.');
        return KnownKeys.namedIgnoringCase(dotted).map(ConfigKey::name).orElse(null);
    }

    private static Map<String, String> readFile(Path file) {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        } catch (IOException e) {
            throw new ConfigException("cannot read config file " + file + ": " + e.getMessage());
        }
        Map<String, String> m = new HashMap<>();
        p.stringPropertyNames().forEach(k -> m.put(k, p.getProperty(k)));
        return m;
    }
}
