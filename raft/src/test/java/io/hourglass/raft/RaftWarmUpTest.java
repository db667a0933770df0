package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RaftWarmUp} with real Ratis servers over real sockets: every step runs (election, writes,
 * a leadership transfer, the loss of a leader and a new election), and nothing is left behind.
 */
@Timeout(120)
class RaftWarmUpTest {
    @TempDir
    Path dir;

    @Test
    void everyStepRunsAndTheThrowawayServersLeaveNothingBehind() throws Exception {
        Path leftover = Files.createDirectories(dir.resolve(RaftWarmUp.DIR_PREFIX + "crashed").resolve("raft"));
        Files.writeString(leftover.resolve("log"), "from a warm-up a crash interrupted");
        Files.writeString(dir.resolve("keep"), "not the warm-up's");

        assertTrue(new RaftWarmUp("t1", dir, "127.0.0.1", null, Duration.ofSeconds(60)).run(),
                "elected, took writes, handed over, lost its leader and elected again");

        assertEquals(List.of("keep"), names(dir), "its own directory and the leftover are gone");
        assertFalse(warmUpThreadsAlive(), "its servers' threads are gone");
    }

    @Test
    void closeStopsARunningWarmUpAndClosesItsServers() throws Exception {
        RaftWarmUp w = new RaftWarmUp("t2", dir, "127.0.0.1", null, Duration.ofSeconds(60));
        CompletableFuture<Boolean> done = w.start();
        await().atMost(Duration.ofSeconds(30)).until(() -> !names(dir).isEmpty()); // under way
        w.close();
        assertFalse(done.get(10, TimeUnit.SECONDS), "stopped before its last step");
        assertEquals(List.of(), names(dir));
        await().atMost(Duration.ofSeconds(10)).until(() -> !warmUpThreadsAlive());
    }

    @Test
    void aDiskWithLessThanTheMarginFreeIsLeftAlone() throws Exception {
        // The node's own Raft log comes first (a chaos test's small tmpfs filled up once).
        assertFalse(new RaftWarmUp("t4", dir, "127.0.0.1", null, Duration.ofSeconds(60), Long.MAX_VALUE).run());
        assertEquals(List.of(), names(dir));
        assertFalse(warmUpThreadsAlive());
    }

    @Test
    void aWarmUpOverItsBudgetGivesUp() throws Exception {
        assertFalse(new RaftWarmUp("t3", dir, "127.0.0.1", null, Duration.ofMillis(1)).run());
        assertEquals(List.of(), names(dir));
    }

    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /** Ratis names its server threads after the member: hg-warmup-1@group-..., and so on. */
    private static boolean warmUpThreadsAlive() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().startsWith(RaftWarmUp.MEMBER_PREFIX));
    }
}
