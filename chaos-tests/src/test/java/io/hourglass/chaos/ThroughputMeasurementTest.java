package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.Subscription;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Throughput of a one-node and of a three-node process cluster, through the Java client with its
 * default batching:
 *
 * <ul>
 *   <li>{@code PUBLISH_THROUGHPUT}: {@code -Dhourglass.measure.messages} (default 50 000)
 *       messages of 100 bytes sent with {@code publishAsync}, from the first send until every
 *       one is committed;
 *   <li>{@code END_TO_END_THROUGHPUT}: a consumer of one group is subscribed; as many messages
 *       are published the same way, from the first send until the consumer has received (and
 *       ACKed, without confirmation) every one of them.
 * </ul>
 *
 * <p>A warm-up of 5 000 messages on another topic runs first and is not counted. The client
 * runs in the test JVM on the same machine as the nodes, so the numbers compare configurations
 * on one machine; they are not a capacity figure. A measurement, skipped unless
 * {@code -Dhourglass.measure=true}.
 */
@Timeout(value = 20, unit = TimeUnit.MINUTES)
final class ThroughputMeasurementTest {
    private static final int MESSAGES = Integer.getInteger("hourglass.measure.messages", 50_000);
    private static final int WARMUP_MESSAGES = 5_000;
    private static final int PAYLOAD_BYTES = 100;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration LEADER_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(5);

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();

    private final Deque<AutoCloseable> clients = new ArrayDeque<>();
    private Distribution distribution;
    private ProcessCluster cluster;

    @BeforeEach
    void locateDistribution() {
        assumeTrue(Measurements.enabled(), "a measurement; run with -D" + Measurements.ENABLED_PROPERTY + "=true");
        distribution = Distribution.locate();
    }

    @AfterEach
    void stopEverything() {
        try {
            while (!clients.isEmpty()) {
                try {
                    clients.pop().close();
                } catch (Exception e) {
                    System.out.println("closing a client failed: " + e);
                }
            }
        } finally {
            if (cluster != null) {
                cluster.close();
            }
        }
    }

    @Test
    void oneNode() {
        measure(1);
    }

    @Test
    void threeNodes() {
        measure(3);
    }

    private void measure(int nodes) {
        cluster = ProcessCluster.create(distribution,
                distribution.newRunDir(getClass().getSimpleName() + "-" + nodes + "nodes"), nodes);
        serverLogs.watch(cluster.nodes());
        cluster.startAll(READY_TIMEOUT);
        cluster.awaitLeader(LEADER_TIMEOUT);
        HourglassClient producer = register(HourglassClient.builder().servers(cluster.clientAddresses()).build());

        publishAll(producer, "warmup", WARMUP_MESSAGES);
        Duration publishing = publishAll(producer, "throughput", MESSAGES);
        Measurements.report(distribution, String.format("PUBLISH_THROUGHPUT nodes=%d msgs/s=%d messages=%d payloadBytes=%d elapsedMs=%d",
                nodes, Measurements.perSecond(MESSAGES, publishing), MESSAGES, PAYLOAD_BYTES, publishing.toMillis()));

        Duration endToEnd = publishAndConsume(producer, nodes);
        Measurements.report(distribution, String.format("END_TO_END_THROUGHPUT nodes=%d msgs/s=%d messages=%d payloadBytes=%d elapsedMs=%d",
                nodes, Measurements.perSecond(MESSAGES, endToEnd), MESSAGES, PAYLOAD_BYTES, endToEnd.toMillis()));
    }

    /** Publishes with {@code publishAsync} and returns the time until every message is committed. */
    private static Duration publishAll(HourglassClient producer, String topic, int count) {
        List<CompletableFuture<PublishResult>> results = new ArrayList<>(count);
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            results.add(producer.publishAsync(Message.builder(topic).payload(payload(i)).build()));
        }
        producer.flush();
        try {
            CompletableFuture.allOf(results.toArray(CompletableFuture[]::new))
                    .get(RUN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            long done = results.stream().filter(f -> f.isDone() && !f.isCompletedExceptionally()).count();
            throw new AssertionError("publishing " + count + " messages to " + topic + " failed after " + done
                    + " committed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /** A subscribed consumer; returns the time from the first publish until it has every message. */
    private Duration publishAndConsume(HourglassClient producer, int nodes) {
        HourglassClient consumerClient = register(HourglassClient.builder().servers(cluster.clientAddresses()).build());
        Set<String> received = ConcurrentHashMap.newKeySet();
        AtomicLong lastNewAt = new AtomicLong();
        Subscription subscription = consumerClient.subscribe("end-to-end", "bench", (m, ctx) -> {
            if (received.add(m.id())) {
                lastNewAt.set(System.nanoTime());
            }
            ctx.ack();
        });
        await("the consumer subscribed").atMost(LEADER_TIMEOUT).until(subscription::isSubscribed);

        long start = System.nanoTime();
        publishAll(producer, "end-to-end", MESSAGES);
        try {
            await("every message received").atMost(RUN_TIMEOUT).pollInterval(Duration.ofMillis(50))
                    .until(() -> received.size() >= MESSAGES);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("on " + nodes + " node(s) the consumer received only " + received.size() + " of "
                    + MESSAGES + " within " + RUN_TIMEOUT, e);
        }
        assertEquals(MESSAGES, received.size());
        return Duration.ofNanos(lastNewAt.get() - start);
    }

    /** {@value #PAYLOAD_BYTES} ASCII bytes: the index, zero-padded. */
    private static String payload(int i) {
        return String.format("%0" + PAYLOAD_BYTES + "d", i);
    }

    private <T extends AutoCloseable> T register(T client) {
        clients.push(client);
        return client;
    }
}
