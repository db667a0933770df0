package io.hourglass.core.config;

import java.util.List;

/**
 * A titled group of keys, in the order the configuration reference lists them. A section groups
 * keys for a reader; the keys themselves are declared next to the record that reads them.
 *
 * @param title the heading in the reference, e.g. {@code Delivery}
 * @param keys the section's keys, none twice
 */
public record ConfigSection(String title, List<ConfigKey<?>> keys) {
    public ConfigSection {
        keys = List.copyOf(keys);
        if (title.isBlank() || keys.isEmpty() || keys.stream().map(ConfigKey::name).distinct().count() != keys.size()) {
            throw new IllegalArgumentException("section '" + title + "' needs a title and distinct keys: " + keys);
        }
    }

    public static ConfigSection of(String title, ConfigKey<?>... keys) {
        return new ConfigSection(title, List.of(keys));
    }
}
