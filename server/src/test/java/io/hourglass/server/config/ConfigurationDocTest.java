package io.hourglass.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.config.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * docs/configuration.md cannot drift from the code: it lists exactly the keys the server reads,
 * and configuring a node with every documented default gives the same configuration as none.
 */
@Timeout(30)
class ConfigurationDocTest {
    private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| `([^`]*)` \\| (.+) \\|$");

    private static Map<String, String> documented() throws IOException {
        Map<String, String> keys = new HashMap<>();
        for (String line : Files.readAllLines(Path.of("..", "docs", "configuration.md"))) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                keys.put(m.group(1), m.group(2).equals("(empty)") ? "" : m.group(2));
                assertTrue(m.group(3).length() > 10, "key " + m.group(1) + " has a meaning");
            }
        }
        return keys;
    }

    @Test
    void everyKeyTheServerReadsIsDocumentedAndNothingElse() throws IOException {
        assertEquals(new TreeSet<>(KnownKeys.ALL), new TreeSet<>(documented().keySet()));
    }

    @Test
    void documentedDefaultsAreTheDefaults() throws IOException {
        Map<String, String> docs = documented();
        docs.remove("node.dataDir"); // resolved against the working directory: compared below
        NodeConfig defaults = NodeConfig.from(Settings.empty());
        NodeConfig fromDocs = NodeConfig.from(new Settings(docs));
        assertEquals(defaults.delivery(), fromDocs.delivery());
        assertEquals(defaults.limits(), fromDocs.limits());
        assertEquals(defaults.rooms(), fromDocs.rooms());
        assertEquals(defaults.raft(), fromDocs.raft());
        assertEquals(defaults.grpc(), fromDocs.grpc());
        assertEquals(defaults.http(), fromDocs.http());
        assertEquals(List.of(defaults.host(), defaults.bindHost(), defaults.grpcPort(), defaults.httpPort()),
                List.of(fromDocs.host(), fromDocs.bindHost(), fromDocs.grpcPort(), fromDocs.httpPort()));
        assertEquals("data", documented().get("node.dataDir"));
        assertEquals(Path.of("data").toAbsolutePath(), defaults.dataDir());
    }
}
