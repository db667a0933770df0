package io.hourglass.server;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.raft.Leadership;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose whole process stalls for longer than the election timeout (a busy machine, a long GC,
 * the host's scheduler) keeps leading when nothing else took over. Ratis' JVM pause monitor made a
 * leader step down after any stall longer than its step-down wait, which Hourglass sets to the maximum
 * election timeout (2 s): on a busy CI machine a single node gave up leadership mid-test, and clients
 * got "not the leader and no leader is known" from a node that was the only member. Here the pause
 * monitor's own thread is held for 4 s, which it takes for a 4 s stall of the process.
 */
@Timeout(120)
class JvmPauseTest {
    @TempDir
    Path dir;
    private TestNode node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.node().close();
        }
    }

    @Test
    @SuppressWarnings("removal") // Thread.suspend: the only way to stall the monitor's thread from outside
    void aStallLongerThanTheElectionTimeoutDoesNotMakeTheOnlyMemberStepDown() {
        node = TestNode.start(dir);
        Leadership before = node.node().raft().leadership();
        List<Thread> monitors = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().toLowerCase(Locale.ROOT).contains("pausemonitor"))
                .collect(Collectors.toList());
        assertTrue(!monitors.isEmpty(), "no JVM pause monitor thread among " + Thread.getAllStackTraces().keySet());
        monitors.forEach(Thread::suspend);
        try {
            long until = System.nanoTime() + Duration.ofSeconds(4).toNanos();
            await().pollInterval(Duration.ofMillis(100)).atMost(Duration.ofSeconds(10)).until(() -> System.nanoTime() >= until);
        } finally {
            monitors.forEach(Thread::resume);
        }
        // The monitor notices the stall on its next turn (it sleeps 500 ms); give it time to act on it.
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10))
                .until(() -> node.node().raft().leadership().equals(before));
        assertEquals(before, node.node().raft().leadership());
        assertTrue(node.node().isLeader());
    }
}
