package io.hourglass.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code bin/hourglass-server} as an operator and a supervisor see it: no arguments means a
 * standalone node in {@code ./data}; the script becomes the JVM, so signals reach the node; and
 * a node killed with {@code kill -9} starts again on its data directory and ports.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
final class ServerScriptTest {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(90);
    /** How the JVM exits after running its shutdown hooks on SIGTERM: 128 + 15. */
    private static final int EXIT_ON_SIGTERM = 143;

    private Distribution distribution;
    private Path runDir;
    private ServerProcess node;

    @BeforeEach
    void createRunDir() {
        distribution = Distribution.locate();
        runDir = distribution.newRunDir(getClass().getSimpleName());
    }

    @AfterEach
    void closeNode() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void withoutArgumentsRunsAStandaloneNodeWithItsDataInDotData() {
        node = ServerProcess.withoutArguments(distribution, runDir);
        node.startAndAwaitReady(READY_TIMEOUT);

        assertEquals(200, node.httpStatus("/healthz"));
        assertTrue(Files.isDirectory(node.dataDir().resolve("db")), () -> "no RocksDB in " + node.dataDir());
        assertTrue(Files.isDirectory(node.dataDir().resolve("ratis")), () -> "no Raft log in " + node.dataDir());
    }

    @Test
    void theScriptExecsTheJvmSoSigtermStopsTheNodeCleanly() {
        node = ServerProcess.standalone(distribution, runDir, "n1");
        node.startAndAwaitReady(READY_TIMEOUT);
        String command = node.processCommand();
        assertTrue(command.endsWith("/java"), () -> "the node's process should be the JVM, not a shell: " + command);

        assertEquals(EXIT_ON_SIGTERM, node.stop(), () -> node.outputTail(40));
        assertEquals(-1, node.httpStatus("/healthz"), "the HTTP port should be closed");
    }

    @Test
    void aNodeKilledWithSigkillStartsAgainOnItsDataAndPorts() {
        node = ServerProcess.standalone(distribution, runDir, "n1");
        node.startAndAwaitReady(READY_TIMEOUT);
        long firstPid = node.pid();

        node.kill();
        assertFalse(node.isAlive());
        assertFalse(ProcessHandle.of(firstPid).map(ProcessHandle::isAlive).orElse(false), "pid " + firstPid + " lives");

        node.startAndAwaitReady(READY_TIMEOUT);
        assertTrue(node.pid() != firstPid);
        assertEquals(200, node.httpStatus("/healthz"));
    }
}
