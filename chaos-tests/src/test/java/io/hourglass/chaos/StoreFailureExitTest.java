package io.hourglass.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A node whose store fails under it (here: its RocksDB directory deleted while it runs, so the next
 * snapshot's flush fails) stops once and {@code hourglass-server} exits with status 70 — it neither
 * keeps a dead JVM running nor loops logging the failure (the bug that once filled 58 GB of disk).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
final class StoreFailureExitTest {
    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();
    private ServerProcess node;

    @AfterEach
    void stop() {
        if (node != null && node.isAlive()) {
            node.kill();
        }
    }

    @Test
    void aNodeWhoseStoreFailsExitsWithStatus70AndLogsTheFailureOnce() throws Exception {
        Distribution distribution = Distribution.locate();
        node = ServerProcess.standalone(distribution, distribution.newRunDir(getClass().getSimpleName()), "n1")
                .withEnv(Map.of("HOURGLASS_RAFT_SNAPSHOTEVERYENTRIES", "100"));
        serverLogs.watch(java.util.List.of(node));
        node.startAndAwaitReady(Duration.ofSeconds(120));
        try (HourglassClient client = HourglassClient.builder().servers(java.util.List.of(node.ports().grpcAddress())).build()) {
            client.publish(Message.of("t", "before"));
            deleteRecursively(node.dataDir().resolve("db"));
            for (int i = 0; i < 150 && node.isAlive(); i++) {
                try {
                    client.publish(Message.of("t", "after " + i)); // one entry each: a snapshot falls due
                } catch (RuntimeException refused) {
                    break; // the node stopped serving
                }
            }
        }
        assertEquals(70, node.awaitOwnExit(Duration.ofSeconds(90)), "exit status of a node whose store failed");
        String log = Files.readString(node.outputFile());
        long stops = log.lines().filter(l -> l.contains("stops: its store failed")).count();
        long errors = log.lines().filter(l -> l.contains(" ERROR ")).count();
        assertEquals(1, stops, "the node says once that it stops");
        assertTrue(errors <= 50, errors + " ERROR lines: the failure must not be logged in a loop");
    }

    private static void deleteRecursively(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(f);
            }
        }
    }
}
