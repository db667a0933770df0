package io.hourglass.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.Settings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The checked-in configuration reference is what the key declarations render: docs/configuration.md's
 * tables and the shipped conf/hourglass.properties' keys. When one differs, this test writes the
 * regenerated file under target/config-reference/ and fails with the command that copies it into place.
 * Reading the checked-in docs back besides catches a renderer that drops a key or garbles a default.
 */
@Timeout(30)
class ConfigReferenceTest {
    private static final Path ROOT = Path.of("..");
    private static final Path MARKDOWN = Path.of("docs", "configuration.md");
    private static final Path PROPERTIES = Path.of("deploy", "src", "main", "conf", "hourglass.properties");
    private static final Path REGENERATED = Path.of("target", "config-reference");
    private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| `([^`]*)` \\| [^|]* \\| (.+) \\|$");

    private static String read(Path file) throws IOException {
        return Files.readString(ROOT.resolve(file), StandardCharsets.UTF_8);
    }

    private static void assertUpToDate(Path file, String regenerated) throws IOException {
        String checkedIn = read(file);
        if (checkedIn.equals(regenerated)) {
            return;
        }
        Files.createDirectories(REGENERATED);
        Path fresh = REGENERATED.resolve(file.getFileName());
        Files.writeString(fresh, regenerated, StandardCharsets.UTF_8);
        List<String> was = checkedIn.lines().toList();
        List<String> is = regenerated.lines().toList();
        int line = 0;
        while (line < Math.min(was.size(), is.size()) && was.get(line).equals(is.get(line))) {
            line++;
        }
        fail(file + " differs from what the config key declarations render (first at line " + (line + 1)
                + ": checked in '" + (line < was.size() ? was.get(line) : "") + "', rendered '"
                + (line < is.size() ? is.get(line) : "") + "'). This test regenerated it; from the repository "
                + "root: cp server/" + fresh + " " + file
                + " (edit the ConfigKey declarations and their sections, never the generated part)");
    }

    @Test
    void docsConfigurationMdIsWhatTheDeclarationsRender() throws IOException {
        assertUpToDate(MARKDOWN, ConfigReference.splice(read(MARKDOWN), ConfigReference.MARKDOWN_BEGIN,
                ConfigReference.MARKDOWN_END, ConfigReference.markdown(KnownKeys.SECTIONS)));
    }

    @Test
    void theShippedPropertiesFileIsWhatTheDeclarationsRender() throws IOException {
        assertUpToDate(PROPERTIES, ConfigReference.splice(read(PROPERTIES), ConfigReference.PROPERTIES_BEGIN, null,
                ConfigReference.properties(KnownKeys.SECTIONS)));
    }

    /** Every {@code | `key` | `default` | bounds | meaning |} row of docs/configuration.md. */
    private static Map<String, String> documented() throws IOException {
        Map<String, String> keys = new HashMap<>();
        for (String line : read(MARKDOWN).lines().toList()) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                String previous = keys.put(m.group(1), m.group(2).equals("(empty)") ? "" : m.group(2));
                assertEquals(null, previous, m.group(1) + " is documented twice");
                assertTrue(m.group(3).length() > 10, "key " + m.group(1) + " has a meaning");
            }
        }
        return keys;
    }

    @Test
    void theDocsListEveryKeyTheServerReadsAndNothingElse() throws IOException {
        assertEquals(KnownKeys.ALL.stream().map(ConfigKey::name).sorted().collect(Collectors.toList()),
                documented().keySet().stream().sorted().collect(Collectors.toList()));
    }

    @Test
    void configuringEveryDocumentedDefaultGivesTheDefaults() throws IOException {
        Map<String, String> docs = documented();
        assertEquals("data", docs.remove("node.dataDir"), "resolved against the working directory: compared below");
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
        assertEquals(Path.of("data").toAbsolutePath(), defaults.dataDir());
    }
}
