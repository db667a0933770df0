package io.hourglass.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.Settings;
import io.hourglass.server.config.KnownKeys;
import io.hourglass.server.config.NodeConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shipped {@code conf/hourglass.properties}, as the distribution installs it, documents every key
 * of the server's registry ({@link KnownKeys}), each commented out with its true default, and sets
 * nothing: {@code hourglass-server} with no arguments must stay a standalone node with its data in
 * {@code ./data} (DESIGN §7).
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
final class ShippedConfigTest {
    /** A documented key: {@code #key=default}, the key starting with a lower-case letter and holding a dot. */
    private static final Pattern COMMENTED_KEY = Pattern.compile("#([a-z][A-Za-z]*\\.[A-Za-z.]+)=(.*)");

    private static List<String> lines;

    @BeforeAll
    static void readShippedFile() throws IOException {
        lines = Files.readAllLines(Distribution.locate().shippedConfig(), StandardCharsets.UTF_8);
    }

    @Test
    void setsNoKeySoThatNoArgumentsMeansAStandaloneNodeInDotData() {
        List<String> active = new ArrayList<>();
        for (String line : lines) {
            String t = line.strip();
            if (!t.isEmpty() && !t.startsWith("#") && !t.startsWith("!")) {
                active.add(line);
            }
        }
        assertEquals(List.of(), active, "lines that would change the defaults");
    }

    @Test
    void documentsExactlyTheKeysTheServerReadsEachOnce() {
        Map<String, String> documented = documentedDefaults();
        Set<String> serverKeys = KnownKeys.ALL.stream().map(ConfigKey::name).collect(Collectors.toSet());
        assertEquals(new TreeSet<>(serverKeys), new TreeSet<>(documented.keySet()));
    }

    @Test
    void documentedDefaultsAreTheServersDefaults() {
        NodeConfig shipped = NodeConfig.from(new Settings(documentedDefaults()));
        NodeConfig defaults = NodeConfig.from(Settings.empty());
        assertEquals(defaults.dataDir(), shipped.dataDir(), "node.dataDir");
        assertEquals(defaults.host(), shipped.host(), "node.host");
        assertEquals(defaults.bindHost(), shipped.bindHost(), "node.bindHost");
        assertEquals(defaults.grpcPort(), shipped.grpcPort(), "grpc.port");
        assertEquals(defaults.httpPort(), shipped.httpPort(), "http.port");
        assertEquals(defaults.raft(), shipped.raft(), "node.id, cluster.peers and raft.*");
        assertEquals(defaults.delivery(), shipped.delivery(), "delivery.*");
        assertEquals(defaults.limits(), shipped.limits(), "limits.*");
        assertEquals(defaults.rooms(), shipped.rooms(), "rooms.*");
        assertEquals(defaults.grpc(), shipped.grpc(), "grpc.*");
        assertEquals(defaults.http(), shipped.http(), "http.*");
    }

    /** Every {@code #key=default} line, in file order; fails on a key documented twice. */
    private static Map<String, String> documentedDefaults() {
        Map<String, String> documented = new LinkedHashMap<>();
        for (String line : lines) {
            Matcher m = COMMENTED_KEY.matcher(line.strip());
            if (m.matches()) {
                String previous = documented.put(m.group(1), m.group(2).strip());
                assertTrue(previous == null, () -> m.group(1) + " is documented twice");
            }
        }
        return documented;
    }
}
