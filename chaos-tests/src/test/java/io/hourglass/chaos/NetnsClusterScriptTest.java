package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code deploy/netns-cluster.sh} as the README shows it: {@code up 3} puts each node in its own
 * namespace and prints {@code --servers}; {@code isolate} the leader and the others elect a new
 * one; {@code heal} and it is back; {@code down} leaves no namespace behind. Needs root and
 * network namespaces; skipped (and said so) otherwise. Uses its own prefix and subnet.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class NetnsClusterScriptTest {
    private static final Duration ELECTION = Duration.ofSeconds(30);

    @Test
    void upIsolateHealAndDown() throws Exception {
        Optional<String> unavailable = NetnsNetwork.unavailableReason();
        assumeTrue(unavailable.isEmpty(), () -> "needs network namespaces: " + unavailable.orElse(""));
        Distribution distribution = Distribution.locate();
        Path runDir = distribution.newRunDir(getClass().getSimpleName());
        int k = ThreadLocalRandom.current().nextInt(200, 250);
        String prefix = "hgs" + k;
        String net = "10.79." + k;
        Map<String, String> env = Map.of("HOURGLASS_HOME", distribution.home().toString(),
                "HOURGLASS_RUN_DIR", runDir.resolve("cluster").toString(),
                "HOURGLASS_NETNS_PREFIX", prefix, "HOURGLASS_NET", net);
        Path script = distribution.deployScript("netns-cluster.sh");
        try {
            String up = NetnsNetwork.runScript(script, env, "up", "3");
            assertTrue(up.contains("--servers " + net + ".11:7070," + net + ".12:7070," + net + ".13:7070"), up);

            String leader = await("a leader").atMost(ELECTION).pollInterval(Duration.ofSeconds(1))
                    .until(() -> leaderIn(NetnsNetwork.runScript(script, env, "status")), Optional::isPresent)
                    .orElseThrow();
            NetnsNetwork.runScript(script, env, "isolate", leader);
            String next = await("a new leader while " + leader + " is isolated").atMost(ELECTION)
                    .pollInterval(Duration.ofSeconds(1))
                    .until(() -> leaderIn(NetnsNetwork.runScript(script, env, "status")), Optional::isPresent)
                    .orElseThrow();
            assertNotEquals(leader, next);

            NetnsNetwork.runScript(script, env, "heal", leader);
            await("all three ready again").atMost(ELECTION).pollInterval(Duration.ofSeconds(1))
                    .until(() -> NetnsNetwork.runScript(script, env, "status").lines()
                            .filter(l -> l.contains(" ready")).count() == 3);
        } finally {
            NetnsNetwork.runScript(script, env, "down");
        }
        String namespaces = new String(new ProcessBuilder("ip", "netns", "list").start().getInputStream().readAllBytes());
        assertFalse(namespaces.contains(prefix + "-n"), namespaces);
        String links = new String(new ProcessBuilder("ip", "-br", "link").start().getInputStream().readAllBytes());
        assertFalse(links.contains(prefix), links);
    }

    /** The node whose {@code status} line says {@code leader}, if exactly one does. */
    private static Optional<String> leaderIn(String status) {
        List<String> leaders = status.lines().filter(l -> l.endsWith(" leader")).map(l -> l.split(" ")[0]).toList();
        assertEquals(true, leaders.size() <= 1, () -> "two leaders: " + status);
        return leaders.size() == 1 ? Optional.of(leaders.get(0)) : Optional.empty();
    }
}
