package io.hourglass.server.config;

import io.hourglass.core.config.ConfigException;
import io.hourglass.core.config.Settings;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Merges the node's settings, later sources overriding earlier ones: the properties file, then
 * {@code HOURGLASS_*} environment variables ({@code HOURGLASS_DELIVERY_INFLIGHTTIMEOUT} →
 * {@code delivery.inFlightTimeout}, matched case-insensitively against known keys or, for unknown
 * ones ignored), then command-line flags. The only class that
 * reads files and the environment.
 */
public final class ConfigLoader {
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
        String dotted = env.substring("HOURGLASS_".length()).replace('_', '.').toLowerCase(Locale.ROOT);
        for (String k : KnownKeys.ALL) {
            if (k.toLowerCase(Locale.ROOT).equals(dotted)) {
                return k;
            }
        }
        return null;
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
