package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * {@code deploy/local-cluster.sh} run as an operator would (issue 6, item 7), each test in its own
 * run directory under {@code target/chaos-runs} and its own free block of ports:
 *
 * <ul>
 *   <li>{@code up 3} exits 0 and prints a {@code --servers} line through which a message goes
 *       from a publisher to a consumer of group {@code g}; then, under a steady load (one
 *       publisher relying on the client's own retries, one consumer acking with
 *       {@code ackConfirmed()}), {@code rolling-restart} exits 0, no publish fails and every
 *       published payload is consumed at least once;
 *   <li>{@code up 5} brings five nodes to ready ({@code status}), a round trip works through its
 *       {@code --servers}, and {@code down} stops all five.
 * </ul>
 *
 * <p>{@code down} runs after every test, failed or not, and any node still named in a
 * {@code n<i>/pid} file of the run directory is then killed. On failure the script runs with
 * their output and the tail of each node's {@code server.out} are printed.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
final class LocalClusterScriptTest {
    private static final Duration UP_TIMEOUT = Duration.ofSeconds(200);
    private static final Duration ROLLING_RESTART_TIMEOUT = Duration.ofSeconds(240);
    private static final Duration SHORT_COMMAND = Duration.ofSeconds(60);
    /** How long every node may take to be ready again after an election right after {@code up}. */
    private static final Duration READY_AGAIN = Duration.ofSeconds(60);
    private static final Duration ROUND_TRIP_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration CONSUME_TIMEOUT = Duration.ofSeconds(90);
    /** The publisher's pace: one synchronous publish, then this pause, then the next. */
    private static final Duration PUBLISH_PAUSE = Duration.ofMillis(10);
    private static final Duration LOAD_AFTER_RESTART = Duration.ofSeconds(3);
    private static final String GROUP = "g";
    private static final int SHOWN = 20;

    private final List<LocalClusterScript> scripts = new CopyOnWriteArrayList<>();
    private final Deque<AutoCloseable> closeables = new ArrayDeque<>();

    @RegisterExtension
    final TestWatcher reportOnFailure = new TestWatcher() {
        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            for (LocalClusterScript script : scripts) {
                System.out.println("\n" + context.getDisplayName() + " failed\n" + script.report(80));
            }
        }
    };

    @AfterEach
    void tearDown() {
        try {
            while (!closeables.isEmpty()) {
                try {
                    closeables.pop().close();
                } catch (Exception e) {
                    System.out.println("closing failed: " + e);
                }
            }
        } finally {
            for (LocalClusterScript script : scripts) {
                script.tearDown();
            }
        }
    }

    @Test
    void threeNodesComeUpAndARollingRestartUnderLoadLosesNothing() {
        LocalClusterScript script = newScript("three");
        long upStarted = System.nanoTime();
        List<String> servers = script.runOk(UP_TIMEOUT, "up", "3").servers();
        System.out.printf("LocalClusterScriptTest: up 3 took %d ms, servers %s%n", millisSince(upStarted), servers);
        assertEquals(3, servers.size(), () -> "--servers " + servers);
        assertAllReady(script, 3);
        roundTrip(servers, "local-roundtrip-3");

        // Steady load: a publisher that counts what still fails after the client's own retries,
        // and a consumer of group g that records every payload and confirms every ACK.
        Set<String> published = ConcurrentHashMap.newKeySet();
        Set<String> consumed = ConcurrentHashMap.newKeySet();
        LongAdder publishFailures = new LongAdder();
        AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        LongAdder confirmed = new LongAdder();
        LongAdder confirmFailures = new LongAdder();
        AtomicLong sequence = new AtomicLong();
        String topic = "local-load";

        HourglassClient consumer = register(HourglassClient.builder().servers(servers).build());
        consumer.subscribe(topic, GROUP, (message, context) -> {
            consumed.add(message.payloadUtf8());
            context.ackConfirmed().whenComplete((ok, error) -> (error == null ? confirmed : confirmFailures).increment());
        });
        HourglassClient publisher = register(HourglassClient.builder().servers(servers).build());
        ScheduledExecutorService load = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "local-cluster-publisher");
            t.setDaemon(true);
            return t;
        });
        closeables.push(load::shutdownNow);
        load.scheduleWithFixedDelay(() -> {
            String payload = "p-" + sequence.incrementAndGet();
            try {
                publisher.publish(Message.of(topic, payload));
                published.add(payload);
            } catch (RuntimeException e) {
                publishFailures.increment();
                firstFailure.compareAndSet(null, e);
            }
        }, 0, PUBLISH_PAUSE.toMillis(), TimeUnit.MILLISECONDS);
        await("the load running").atMost(ROUND_TRIP_TIMEOUT).pollInterval(Duration.ofMillis(50))
                .until(() -> published.size() >= 50 && consumed.size() >= 1);

        long restartStarted = System.nanoTime();
        int publishedBefore = published.size();
        String restartOutput = script.runOk(ROLLING_RESTART_TIMEOUT, "rolling-restart").output();
        long restartMs = millisSince(restartStarted);
        int publishedDuring = published.size() - publishedBefore;
        assertAllReady(script, 3);

        long afterRestart = System.nanoTime();
        int publishedAtRestartEnd = published.size();
        await("more load after the rolling restart").atMost(LOAD_AFTER_RESTART.plusSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> millisSince(afterRestart) >= LOAD_AFTER_RESTART.toMillis()
                        && published.size() > publishedAtRestartEnd);
        load.shutdown();
        try {
            // A publish in progress may be retrying for up to the client's 30 s deadline.
            assertTrue(load.awaitTermination(60, TimeUnit.SECONDS), "the publisher did not stop");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }

        assertEquals(0, publishFailures.sum(), () -> publishFailures.sum() + " publishes failed after the client's"
                + " retries (" + published.size() + " succeeded); the first: " + firstFailure.get());
        try {
            await("every published payload consumed").atMost(CONSUME_TIMEOUT).pollInterval(Duration.ofMillis(100))
                    .until(() -> consumed.containsAll(published));
        } catch (ConditionTimeoutException e) {
            List<String> missing = published.stream().filter(p -> !consumed.contains(p)).sorted().toList();
            throw new AssertionError(missing.size() + " of " + published.size() + " published payloads never consumed, e.g. "
                    + missing.subList(0, Math.min(SHOWN, missing.size())), e);
        }
        System.out.printf("LocalClusterScriptTest: rolling-restart took %d ms; published %d (%d during the restart),"
                        + " consumed %d distinct, ACKs confirmed %d, confirmations failed %d, publish failures %d%n",
                restartMs, published.size(), publishedDuring, consumed.size(), confirmed.sum(), confirmFailures.sum(),
                publishFailures.sum());
        assertTrue(publishedDuring > 0, "nothing was published while the nodes restarted");
        assertTrue(restartOutput.lines().anyMatch(l -> l.startsWith("moved the leadership from n")),
                () -> "the leader was stopped without moving its leadership first:\n" + restartOutput);
    }

    @Test
    void fiveNodesComeUpServeAndGoDown() {
        LocalClusterScript script = newScript("five");
        long upStarted = System.nanoTime();
        List<String> servers = script.runOk(UP_TIMEOUT, "up", "5").servers();
        System.out.printf("LocalClusterScriptTest: up 5 took %d ms, servers %s%n", millisSince(upStarted), servers);
        assertEquals(5, servers.size(), () -> "--servers " + servers);
        assertAllReady(script, 5);
        roundTrip(servers, "local-roundtrip-5");

        script.runOk(Duration.ofSeconds(150), "down");
        List<String> status = nodeLines(script.runOk(SHORT_COMMAND, "status"));
        assertEquals(5, status.size(), () -> "status: " + status);
        assertTrue(status.stream().allMatch(l -> l.split(" ")[1].equals("down")), () -> "after down, status: " + status);
    }

    private LocalClusterScript newScript(String label) {
        Distribution distribution = Distribution.locate();
        LocalClusterScript script = new LocalClusterScript(distribution,
                distribution.newRunDir(getClass().getSimpleName() + "-" + label), LocalClusterScript.freePortBlock());
        scripts.add(script);
        System.out.printf("LocalClusterScriptTest: %s cluster in %s, base port %d%n", label, script.runDir(),
                script.basePort());
        return script;
    }

    /**
     * {@code status} shows one line per node, each alive and ending in {@code ready}, within
     * {@link #READY_AGAIN}. Not at once: {@code up} returns when every node was ready, but a cluster
     * this size on 2 cores can elect again right after (in CI a 1.5 s GC pause of the leader did), and a
     * follower is not ready until it has applied what the new leader committed.
     */
    private static void assertAllReady(LocalClusterScript script, int nodes) {
        LocalClusterScript.Result[] last = new LocalClusterScript.Result[1];
        try {
            await().atMost(READY_AGAIN).pollInterval(Duration.ofSeconds(1)).until(() -> {
                last[0] = script.runOk(SHORT_COMMAND, "status");
                List<String> lines = nodeLines(last[0]);
                return lines.size() == nodes && lines.stream().allMatch(l -> l.endsWith(" ready") && l.contains(" pid="));
            });
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("not every node ready within " + READY_AGAIN + ":\n"
                    + (last[0] == null ? "(no status)" : last[0].describe()), e);
        }
    }

    private static List<String> nodeLines(LocalClusterScript.Result result) {
        return result.output().lines().filter(l -> l.matches("n[1-9] .*")).toList();
    }

    /** One message published through {@code servers} reaches a consumer of group g, whose ACK is confirmed. */
    private void roundTrip(List<String> servers, String topic) {
        Set<String> received = ConcurrentHashMap.newKeySet();
        LongAdder confirmed = new LongAdder();
        HourglassClient consumer = register(HourglassClient.builder().servers(servers).build());
        consumer.subscribe(topic, GROUP, (message, context) -> {
            received.add(message.payloadUtf8());
            context.ackConfirmed().thenRun(confirmed::increment);
        });
        HourglassClient publisher = register(HourglassClient.builder().servers(servers).build());
        String payload = "hello-" + System.nanoTime();
        publisher.publish(Message.of(topic, payload));
        await("the round trip on " + topic).atMost(ROUND_TRIP_TIMEOUT).pollInterval(Duration.ofMillis(50))
                .until(() -> received.contains(payload) && confirmed.sum() >= 1);
    }

    private <T extends AutoCloseable> T register(T closeable) {
        closeables.push(closeable);
        return closeable;
    }

    private static long millisSince(long nanoTime) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanoTime);
    }
}
