package io.hourglass.chaos.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.chaos.Distribution;
import io.hourglass.chaos.ProcessCluster;
import io.hourglass.chaos.ServerLogsOnFailure;
import io.hourglass.chaos.ServerProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Python and Node.js quick-start examples ({@code examples/}) run as a user runs them, against
 * three server processes of the built distribution on loopback, given the {@code .proto} files the
 * distribution ships. Each test:
 *
 * <ol>
 *   <li>lists a follower first in {@code --servers}, so that the example's first subscription is
 *       refused with the {@code hourglass-leader} trailer and must follow it;
 *   <li>waits for the example to print that its confirmed ACK was confirmed, then {@code kill -9}s
 *       the node its stream is on (the leader), while messages are still due (message i is due
 *       (i+1) × 200 ms after publishing; the example consumes for at least 8 s);
 *   <li>checks from the example's output, not only its exit code: exit 0; the redirect; the stream
 *       on the killed node ended and a stream on another node was subscribed afterwards; every
 *       published message delivered; the confirmed message never delivered after its confirmation
 *       line; the room message received and acked; the {@code result: OK} line.
 * </ol>
 *
 * <p>A missing interpreter or package fails the test naming it ({@link ExampleToolchain}). The
 * example's output is printed and kept in the run directory ({@code target/chaos-runs/ClientExamplesTest-*}).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
final class ClientExamplesTest {
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration LEADER_TIMEOUT = Duration.ofSeconds(60);
    /** Publishing 20 messages, and the fifth falling due and being confirmed. */
    private static final Duration CONFIRMED_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(120);
    private static final int MESSAGES = 20;

    private static final Pattern PUBLISHED = Pattern.compile("^publish: (m-\\d+) id=([0-9a-f]+) ");
    private static final Pattern DELIVERED = Pattern.compile("^consume: (m-\\d+) id=([0-9a-f]+) attempt \\d+ on ");
    private static final Pattern SUBSCRIBED = Pattern.compile("^consume: subscribed to \\S+ as group \\S+ on (\\S+) ");
    private static final Pattern CONFIRMED = Pattern.compile("^consume: ACK of (m-\\d+) confirmed by the server");
    private static final Pattern REDIRECTED = Pattern.compile(
            "^consume: (\\S+) refused: UNAVAILABLE .*; following hourglass-leader to (\\S+)$");
    private static final Pattern ROOM_ACKED = Pattern.compile("^room: received \\S+ .* and acked it: ACKED$");
    private static final Pattern RESULT = Pattern.compile(
            "^result: OK published=" + MESSAGES + " received=" + MESSAGES + " .* after_confirmed_ack=0 room=acked$");

    private final Path module = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
    private final Path examples = module.resolveSibling("examples");
    private Distribution distribution;
    private Path runDir;
    private ProcessCluster cluster;
    private ExampleProcess example;

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();

    @BeforeEach
    void locateDistribution() {
        distribution = Distribution.locate();
        runDir = distribution.newRunDir(getClass().getSimpleName());
    }

    @AfterEach
    void stopEverything() {
        try {
            if (example != null) {
                example.close();
            }
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    @Test
    void pythonExampleFollowsTheLeaderAndReconnectsThroughALeaderKill() {
        List<String> python = ExampleToolchain.python(runDir);
        runThroughALeaderKill("python", concat(python, examples.resolve("python/quickstart.py").toString()), Map.of());
    }

    @Test
    void nodeExampleFollowsTheLeaderAndReconnectsThroughALeaderKill() {
        Path modules = ExampleToolchain.nodeModules(examples.resolve("node"), module.resolve("target/examples/node"));
        runThroughALeaderKill("node", List.of("node", examples.resolve("node/quickstart.js").toString()),
                Map.of("NODE_PATH", modules.toString()));
    }

    private void runThroughALeaderKill(String name, List<String> command, Map<String, String> env) {
        cluster = ProcessCluster.create(distribution, runDir, 3);
        serverLogs.watch(cluster.nodes());
        cluster.startAll(READY_TIMEOUT);
        ServerProcess leader = cluster.awaitLeader(LEADER_TIMEOUT);
        List<String> followers = cluster.nodes().stream().filter(n -> n != leader)
                .map(n -> n.ports().grpcAddress()).toList();
        List<String> servers = List.of(followers.get(0), leader.ports().grpcAddress(), followers.get(1));
        Path protos = ExampleToolchain.shippedProtos(distribution, runDir.resolve("protos"));
        example = ExampleProcess.start(name, concat(command, "--servers", String.join(",", servers),
                        "--protos", protos.toString(), "--messages", Integer.toString(MESSAGES), "--delay-ms", "200",
                        "--consume-seconds", "8", "--timeout", "90"),
                env, runDir, runDir.resolve(name + "-example.out"));

        int confirmedAt = example.awaitLine(CONFIRMED, CONFIRMED_TIMEOUT);
        List<String> beforeKill = example.lines();
        String streamServer = lastMatch(SUBSCRIBED, beforeKill.subList(0, confirmedAt)).group(1);
        ServerProcess victim = cluster.nodeAt(streamServer);
        assertTrue(ProcessCluster.leaderGauge(victim).orElse(false), () -> "the example's stream is on "
                + victim.nodeId() + ", which is not the leader: " + cluster.leadershipReport() + "\n" + example.output());
        victim.kill();
        int killedAfter = beforeKill.size();
        System.out.printf("ClientExamplesTest %s: kill -9 of leader %s (%s) after output line %d%n", name,
                victim.nodeId(), streamServer, killedAfter - 1);

        int exit = example.awaitExit(EXIT_TIMEOUT);
        List<String> out = example.lines();
        String output = example.output();
        System.out.println(output);
        assertEquals(0, exit, () -> "the " + name + " example's exit code\n" + output);

        Matcher redirect = firstMatch(REDIRECTED, out);
        assertTrue(redirect != null && redirect.group(1).equals(servers.get(0))
                        && redirect.group(2).equals(leader.ports().grpcAddress()),
                () -> "the first subscription, on follower " + servers.get(0) + ", must follow hourglass-leader to "
                        + leader.ports().grpcAddress() + "\n" + output);

        int ended = example.indexOf(Pattern.compile("^consume: stream on " + Pattern.quote(streamServer) + " ended: "),
                killedAfter);
        assertTrue(ended >= 0, () -> "no line says the stream on the killed " + streamServer + " ended\n" + output);
        Matcher resubscribed = firstMatch(SUBSCRIBED, out.subList(ended, out.size()));
        assertTrue(resubscribed != null && !resubscribed.group(1).equals(streamServer),
                () -> "no subscription on a surviving node after the kill\n" + output);

        Map<String, String> published = new TreeMap<>();
        Set<String> received = new TreeSet<>();
        for (String line : out) {
            Matcher p = PUBLISHED.matcher(line);
            if (p.find()) {
                published.put(p.group(1), p.group(2));
            }
            Matcher d = DELIVERED.matcher(line);
            if (d.find()) {
                received.add(d.group(1));
            }
        }
        assertEquals(MESSAGES, published.size(), () -> "published messages\n" + output);
        assertEquals(published.keySet(), received, () -> "messages delivered\n" + output);

        String confirmed = firstMatch(CONFIRMED, out).group(1);
        List<String> after = new ArrayList<>();
        for (String line : out.subList(confirmedAt + 1, out.size())) {
            Matcher d = DELIVERED.matcher(line);
            if (d.find() && d.group(1).equals(confirmed)) {
                after.add(line);
            }
        }
        assertEquals(List.of(), after, () -> confirmed + " delivered after its ACK was confirmed\n" + output);
        assertTrue(firstMatch(ROOM_ACKED, out) != null, () -> "no room message received and acked\n" + output);
        assertTrue(RESULT.matcher(out.get(out.size() - 1)).find(), () -> "the last line must be the result\n" + output);
    }

    private static Matcher firstMatch(Pattern pattern, List<String> lines) {
        for (String line : lines) {
            Matcher m = pattern.matcher(line);
            if (m.find()) {
                return m;
            }
        }
        return null;
    }

    private static Matcher lastMatch(Pattern pattern, List<String> lines) {
        Matcher last = null;
        for (String line : lines) {
            Matcher m = pattern.matcher(line);
            if (m.find()) {
                last = m;
            }
        }
        if (last == null) {
            throw new AssertionError("no line matches /" + pattern + "/ in " + lines);
        }
        return last;
    }

    private static List<String> concat(List<String> head, String... tail) {
        return Stream.concat(head.stream(), Stream.of(tail)).toList();
    }
}
