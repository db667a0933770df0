package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code topic peek} of five 1 MiB messages on a real node: before paging the one reply exceeded
 * the client's 4 MiB message limit (RESOURCE_EXHAUSTED); now the server pages under it and the
 * CLI follows the pages, printing previews unless --full.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TopicPeekNodeTest {
    private static final int ONE_MIB = 1_000_000; // under limits.maxPayloadBytes (1 MiB) with room for the rest
    private final ObjectMapper json = new ObjectMapper();

    @Test
    void peeksFiveOneMebibyteMessages(@TempDir Path dir) throws Exception {
        try (TestNode node = TestNode.start(dir)) {
            byte[] payload = new byte[ONE_MIB];
            Arrays.fill(payload, (byte) 'a');
            try (HourglassClient client = HourglassClient.builder().servers(node.target()).build()) {
                for (int i = 0; i < 5; i++) {
                    client.publish(Message.builder("big").payload(payload).build());
                }
                client.publish(Message.builder("big").payload("small".getBytes()).build());
            }

            Cli.Result preview = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(), "--output", "json",
                    "topic", "peek", "big");
            assertEquals(0, preview.exitCode(), preview.err());
            assertEquals("", preview.err());
            List<String> lines = preview.outLines();
            assertEquals(6, lines.size());
            JsonNode first = json.readTree(lines.get(0));
            assertEquals("a".repeat(Payloads.PREVIEW_CHARS) + "…(" + ONE_MIB + " bytes)", first.get("payload").asText());
            assertEquals(ONE_MIB, first.get("payloadBytes").asInt());
            assertEquals("small", json.readTree(lines.get(5)).get("payload").asText());

            Cli.Result full = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(), "--output", "json",
                    "topic", "peek", "big", "--full", "--limit", "4");
            assertEquals(0, full.exitCode(), full.err());
            assertEquals(4, full.outLines().size(), "pages followed up to --limit");
            for (String line : full.outLines()) {
                assertEquals(ONE_MIB, json.readTree(line).get("payload").asText().length());
            }

            Cli.Result table = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(), "topic", "peek", "big");
            assertEquals(0, table.exitCode(), table.err());
            assertTrue(table.outLines().stream().allMatch(l -> l.length() < 400), "previews keep table lines short");
        }
    }
}
