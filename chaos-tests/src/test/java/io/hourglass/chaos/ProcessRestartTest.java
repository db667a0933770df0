package io.hourglass.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A standalone node killed with {@code kill -9} comes back from its data directory: what was
 * published is still there, and a delivery acknowledged with a confirmed ACK is never delivered
 * again. Driven entirely through the distribution's scripts.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
final class ProcessRestartTest {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(90);
    private static final Duration CLI_TIMEOUT = Duration.ofSeconds(60);

    private ServerProcess node;
    private Cli cli;

    @BeforeEach
    void startNode() {
        Distribution distribution = Distribution.locate();
        Path runDir = distribution.newRunDir(getClass().getSimpleName());
        cli = new Cli(distribution, runDir);
        node = ServerProcess.standalone(distribution, runDir, "n1");
        node.startAndAwaitReady(READY_TIMEOUT);
    }

    @AfterEach
    void closeNode() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void confirmedAcksSurviveKillNineAndOnlyTheUnackedMessagesAreRedelivered() {
        Set<String> published = payloads(publish("t", "hello", 20));
        assertEquals(expectedPayloads("hello", 20), published);

        CliResult first = consume("--group", "g", "--count", "10", "--confirm");
        Set<String> confirmed = distinctPayloads(first, 10);
        assertTrue(published.containsAll(confirmed), () -> "delivered what was never published: " + first.describe());

        node.kill();
        node.startAndAwaitReady(READY_TIMEOUT);

        CliResult afterRestart = consume("--group", "g", "--count", "10", "--timeout", "15s");
        Set<String> redelivered = distinctPayloads(afterRestart, 10);
        Set<String> unacked = new TreeSet<>(published);
        unacked.removeAll(confirmed);
        assertEquals(unacked, new TreeSet<>(redelivered),
                () -> "after the restart, expected exactly the 10 unacknowledged messages; confirmed were "
                        + new TreeSet<>(confirmed) + "\n" + afterRestart.describe());

        CliResult drained = consume("--group", "g", "--timeout", "3s");
        assertEquals(List.of(), drained.records(), () -> "the group should have nothing left: " + drained.describe());
    }

    private List<JsonNode> publish(String topic, String payload, int count) {
        CliResult result = cli.run(CLI_TIMEOUT, "--servers", node.ports().grpcAddress(), "--output", "json",
                "publish", topic, payload, "--count", Integer.toString(count)).assertSuccess();
        List<JsonNode> records = result.records();
        assertEquals(count, records.size(), () -> "one record per published message: " + result.describe());
        for (JsonNode r : records) {
            assertTrue(r.hasNonNull("id"), () -> "no id in " + r);
            assertEquals(topic, r.path("topic").asText(null), () -> "topic of " + r);
            assertTrue(r.path("payload").isTextual(), () -> "no payload in " + r);
            assertTrue(r.path("dueAt").isIntegralNumber(), () -> "dueAt is not epoch milliseconds in " + r);
        }
        return records;
    }

    private CliResult consume(String... options) {
        List<String> args = new ArrayList<>(List.of("--servers", node.ports().grpcAddress(), "--output", "json",
                "consume", "t"));
        args.addAll(List.of(options));
        return cli.run(CLI_TIMEOUT, args.toArray(String[]::new)).assertSuccess();
    }

    /** The payloads of exactly {@code count} deliveries, none of them delivered twice. */
    private static Set<String> distinctPayloads(CliResult result, int count) {
        List<JsonNode> records = result.records();
        assertEquals(count, records.size(), () -> "expected " + count + " deliveries: " + result.describe());
        Set<String> payloads = payloads(records);
        assertEquals(count, payloads.size(), () -> "a message was delivered twice: " + result.describe());
        return payloads;
    }

    private static Set<String> payloads(List<JsonNode> records) {
        return records.stream().map(r -> r.path("payload").asText()).collect(Collectors.toCollection(HashSet::new));
    }

    private static Set<String> expectedPayloads(String payload, int count) {
        return IntStream.range(0, count).mapToObj(i -> payload + "-" + i).collect(Collectors.toSet());
    }
}
