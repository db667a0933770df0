package io.hourglass.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.config.Settings;
import io.hourglass.server.Main;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Config precedence as every document states it: flags over HOURGLASS_* environment over the file over
 * defaults — and --help, the shipped file and docs/configuration.md all say that same sentence; --help
 * gives each flag's key and its declared default.
 */
@Timeout(30)
class ConfigLoaderTest {
    @TempDir
    Path dir;

    private Path file(String text) throws IOException {
        Path f = dir.resolve("hourglass.properties");
        Files.writeString(f, text);
        return f;
    }

    @Test
    void flagsBeatTheEnvironmentWhichBeatsTheFileWhichBeatsTheDefaults() throws IOException {
        Path f = file("grpc.port=1001\nhttp.port=2001\nraft.port=3001\n");
        Map<String, String> env = Map.of("HOURGLASS_GRPC_PORT", "1002", "HOURGLASS_HTTP_PORT", "2002");
        Map<String, String> flags = Map.of("grpc.port", "1003");
        NodeConfig c = NodeConfig.from(ConfigLoader.load(f, env, flags));
        assertEquals(1003, c.grpcPort(), "flag over environment and file");
        assertEquals(2002, c.httpPort(), "environment over file");
        assertEquals(3001, c.raft().raftPort(), "file over default");
        assertEquals(NodeConfig.from(Settings.empty()).delivery(), c.delivery(), "defaults where nothing is set");
    }

    @Test
    void environmentVariablesMatchKeysCaseInsensitivelyAndOthersAreIgnored() {
        Settings s = ConfigLoader.load(null, Map.of("HOURGLASS_DELIVERY_INFLIGHTTIMEOUT", "9s",
                "HOURGLASS_SERVERS", "x:1", "HOURGLASS_GRPC_MAXCONSUMERS", "7"), Map.of());
        assertEquals("9s", s.asMap().get("delivery.inFlightTimeout"));
        assertEquals(7, NodeConfig.from(s).grpc().maxConsumers());
        assertEquals(2, s.asMap().size());
    }

    @Test
    void helpTheShippedFileAndTheDocsStateTheSameOrder() throws IOException {
        StringWriter help = new StringWriter();
        new CommandLine(new Main()).setOut(new PrintWriter(help)).execute("--help");
        String oneLine = help.toString().replaceAll("\\s+", " ");
        assertTrue(oneLine.contains(ConfigLoader.PRECEDENCE), oneLine);
        for (var key : List.of(NodeConfig.ID, NodeConfig.DATA_DIR, NodeConfig.GRPC_PORT, RaftKeys.PORT,
                HttpConfig.PORT)) {
            String flagHelp = "(" + key.name() + ", default " + key.defaultText() + ")";
            assertTrue(oneLine.contains(flagHelp), key + ": " + oneLine);
        }
        String docs = Files.readString(Path.of("..", "docs", "configuration.md")).replaceAll("\\s+", " ");
        assertTrue(docs.contains("command-line flags override `HOURGLASS_*` environment variables, which override the "
                + "config file, which overrides the built-in defaults"), "docs/configuration.md");
        String shipped = Files.readString(Path.of("..", "deploy", "src", "main", "conf", "hourglass.properties"))
                .replaceAll("[#\\s]+", " ");
        assertTrue(shipped.contains("command-line flags override HOURGLASS_* environment variables, which override "
                + "this file, which overrides the built-in defaults"), "conf/hourglass.properties");
    }
}
