package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Three nodes, each its own OS process, lose their leader to {@code kill -9} halfway through
 * 10 000 scheduled messages. The scenario:
 *
 * <ol>
 *   <li>publish 5 000 messages with delays of 0–3 s; a consumer of group {@code g} receives them
 *       all and has every ACK confirmed;
 *   <li>publish 5 000 more, and as soon as they are committed (the consumer is receiving the ones
 *       due at once, with ACKs awaiting confirmation) {@code kill -9} the leader;
 *   <li>the same consumer carries on through the failover until every message was delivered.
 * </ol>
 *
 * <p>Checked: every published message is delivered at least once, with its payload; no message
 * reaches the group after its {@code ackConfirmed()} future completed (see {@link DeliveryHistory});
 * ACKs are confirmed again after the failover; the cluster accepts writes again (the time is
 * printed as {@code FAILOVER_MS single=…}); the killed node restarts and rejoins. The clients list
 * all three nodes, as an application would, and find the leader on their own. Delays are random:
 * the seed is printed and {@code -Dhourglass.chaos.seed=…} replays it.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
final class ProcessClusterFailoverTest {
    private static final int MESSAGES = 10_000;
    private static final String TOPIC = "failover";
    private static final String GROUP = "g";
    private static final int MAX_DELAY_MS = 3_000;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration LEADER_TIMEOUT = Duration.ofSeconds(60);
    /** A sanity bound only; the measured time is printed. */
    private static final Duration FAILOVER_BOUND = Duration.ofSeconds(60);
    private static final Duration CONSUME_TIMEOUT = Duration.ofSeconds(120);
    private static final int SHOWN = 20;

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();

    private final Deque<AutoCloseable> clients = new ArrayDeque<>();
    private ProcessCluster cluster;

    @BeforeEach
    void startCluster() {
        Distribution distribution = Distribution.locate();
        cluster = ProcessCluster.create(distribution, distribution.newRunDir(getClass().getSimpleName()), 3);
        serverLogs.watch(cluster.nodes());
        cluster.startAll(READY_TIMEOUT);
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
    void killingTheLeaderLosesNoMessageAndNeverRedeliversAConfirmedOne() {
        long seed = Long.getLong("hourglass.chaos.seed", System.nanoTime());
        System.out.println("ProcessClusterFailoverTest seed: -Dhourglass.chaos.seed=" + seed);
        Random random = new Random(seed);
        ServerProcess leader = cluster.awaitLeader(LEADER_TIMEOUT);
        HourglassClient publisher = register(HourglassClient.builder().servers(cluster.clientAddresses()).build());
        Map<String, String> published = new ConcurrentHashMap<>();

        DeliveryHistory history = new DeliveryHistory();
        HourglassClient consumer = register(HourglassClient.builder().servers(cluster.clientAddresses())
                .channelFactory(DeliveryWiretap.plaintext(history::onWire)).build());
        consumer.subscribe(TOPIC, GROUP, history::handleAndConfirm);

        published.putAll(publish(publisher, random, 0, MESSAGES / 2));
        awaitProgress("the first half delivered and every ACK confirmed", CONSUME_TIMEOUT, history,
                () -> history.confirmedCount() >= MESSAGES / 2 && history.pendingConfirmations() == 0);
        WriteProbe probe = register(new WriteProbe(cluster.clientAddresses(), "failover-probe"));
        probe.awaitWritable(Duration.ofSeconds(30));

        published.putAll(publish(publisher, random, MESSAGES / 2, MESSAGES));
        int confirmedBeforeKill = history.confirmedCount();
        long killedAt = System.nanoTime();
        leader.kill();
        Duration failover = probe.timeToFirstPublishSince(killedAt, FAILOVER_BOUND);
        ServerProcess newLeader = cluster.awaitLeader(LEADER_TIMEOUT);
        System.out.printf("FAILOVER_MS single=%d killed=%s newLeader=%s confirmedBeforeKill=%d%n",
                failover.toMillis(), leader.nodeId(), newLeader.nodeId(), confirmedBeforeKill);

        awaitProgress("every published message delivered to " + GROUP, CONSUME_TIMEOUT, history,
                () -> published.keySet().stream().allMatch(history::wasHandled),
                () -> "; never delivered, e.g. " + published.entrySet().stream()
                        .filter(e -> !history.wasHandled(e.getKey())).limit(SHOWN).toList());
        awaitProgress("every confirmed ACK answered", Duration.ofSeconds(60), history,
                () -> history.pendingConfirmations() == 0);

        leader.startAndAwaitReady(READY_TIMEOUT);
        assertEquals(200, leader.httpStatus("/readyz"), () -> leader.nodeId() + " did not rejoin");
        cluster.awaitLeader(LEADER_TIMEOUT);

        System.out.printf("delivered=%d handlerCalls=%d wireReceipts=%d confirmed=%d failedConfirmations=%d%n",
                history.handledCount(), history.handlerCalls(), history.wireReceipts(), history.confirmedCount(),
                history.failedConfirmations());
        assertEquals(List.of(), history.mismatches(published), "deliveries that do not match what was published");
        assertTrue(history.confirmedCount() > confirmedBeforeKill,
                () -> "no ACK was confirmed after the failover (" + confirmedBeforeKill + " before the kill)");
        List<DeliveryHistory.Violation> violations = history.deliveriesAfterConfirmation();
        assertTrue(violations.isEmpty(), () -> violations.size() + " deliveries to " + GROUP
                + " after the message's ACK was confirmed, e.g. " + violations.subList(0, Math.min(SHOWN, violations.size())));
    }

    /**
     * Publishes messages {@code from} (inclusive) to {@code to} (exclusive) in one call and waits
     * until all are committed. Message i has payload {@code m-i} and a random delay of 0–3 s; a
     * quarter are due at once. Returns payload by message id.
     */
    private static Map<String, String> publish(HourglassClient publisher, Random random, int from, int to) {
        List<Message> messages = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            Duration delay = random.nextInt(4) == 0 ? Duration.ZERO : Duration.ofMillis(random.nextInt(MAX_DELAY_MS + 1));
            messages.add(Message.builder(TOPIC).payload("m-" + i).delay(delay).build());
        }
        List<PublishResult> results = publisher.publishBatch(messages);
        assertEquals(messages.size(), results.size());
        Map<String, String> payloadById = new ConcurrentHashMap<>();
        for (int i = 0; i < results.size(); i++) {
            payloadById.put(results.get(i).id(), "m-" + (from + i));
        }
        assertEquals(messages.size(), payloadById.size(), "every published message should get its own id");
        return payloadById;
    }

    private static void awaitProgress(String what, Duration timeout, DeliveryHistory history,
                                      Callable<Boolean> condition) {
        awaitProgress(what, timeout, history, condition, () -> "");
    }

    private static void awaitProgress(String what, Duration timeout, DeliveryHistory history,
                                      Callable<Boolean> condition, Supplier<String> detail) {
        try {
            await(what).atMost(timeout).pollInterval(Duration.ofMillis(100)).until(condition);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("not within " + timeout + ": " + what + "; delivered " + history.handledCount()
                    + " of " + MESSAGES + ", confirmed " + history.confirmedCount() + ", confirmations pending "
                    + history.pendingConfirmations() + ", failed " + history.failedConfirmations() + detail.get(), e);
        }
    }

    private <T extends AutoCloseable> T register(T client) {
        clients.push(client);
        return client;
    }
}
