package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.Subscription;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The at-least-once promise and the confirmed-ACK promise across the loss of the leader: three
 * nodes, 10 000 messages due over three seconds, half of them consumed with confirmed ACKs, then
 * the leader is closed (in one JVM, the stand-in for kill -9) while the other half is due or held
 * unacknowledged by the consumer. The new leader starts with no in-flight state, so it may deliver
 * again whatever was not confirmed — but everything must arrive, and nothing after its confirmed
 * ACK completed.
 */
@Timeout(240)
class LeaderFailoverTest {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderFailoverTest.class);
    private static final String TOPIC = "failover";
    private static final String GROUP = "g";
    private static final int MESSAGES = 10_000;
    private static final int CONFIRMED_BEFORE_FAILOVER = MESSAGES / 2;
    /** Delays spread over 0–3 s (a prime stride, so due times interleave with publish order). */
    private static final long MAX_DELAY_MS = 3_000;

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    @Test
    void everyMessageArrivesAndNoneAfterItsConfirmedAckAcrossALeaderFailure() {
        TestCluster cluster = resources.start(dir, 3, Map.of());
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        DeliveryLog log = new DeliveryLog();
        // Before the failover: confirmed ACKs for at most CONFIRMED_BEFORE_FAILOVER messages (a
        // confirmation that fails gives its place back); every other delivery is held — neither
        // ACKed nor NACKed — so that the failover finds messages in flight. After it: ACK all.
        Set<String> confirming = ConcurrentHashMap.newKeySet();
        AtomicBoolean leaderKilled = new AtomicBoolean();
        // One subscription for the whole test: it must reconnect to the new leader on its own.
        Subscription consumer = client.subscribe(TOPIC, GROUP, (m, ctx) -> {
            log.received("consumer", m);
            if (leaderKilled.get()) {
                log.ackConfirmed(m, ctx);
            } else if (confirming.size() < CONFIRMED_BEFORE_FAILOVER && confirming.add(m.id())) {
                log.ackConfirmed(m, ctx).whenComplete((ok, error) -> {
                    if (error != null) {
                        confirming.remove(m.id());
                    }
                });
            }
        });
        await("the consumer is subscribed").atMost(Duration.ofSeconds(30)).until(consumer::isSubscribed);

        long started = System.nanoTime();
        List<Message> batch = IntStream.range(0, MESSAGES).mapToObj(i -> Message.builder(TOPIC).payload("m" + i)
                .delay(Duration.ofMillis(i * 7_919L % (MAX_DELAY_MS + 1))).build()).toList();
        Set<String> published = client.publishBatch(batch).stream().map(PublishResult::id).collect(Collectors.toSet());
        assertEquals(MESSAGES, published.size(), "every message got its own id");
        LOG.info("published {} messages in {} ms", MESSAGES, (System.nanoTime() - started) / 1_000_000);

        await("half of the messages consumed with confirmed ACKs").atMost(Duration.ofSeconds(90))
                .until(() -> log.confirmedCount() >= CONFIRMED_BEFORE_FAILOVER);
        LOG.info("before the failover: {}", log.summary());

        TestNode oldLeader = cluster.awaitLeader();
        leaderKilled.set(true);
        long killed = System.nanoTime();
        oldLeader.stop();
        TestNode newLeader = cluster.awaitLeaderOtherThan(oldLeader, Duration.ofSeconds(30));
        LOG.info("{} leads {} ms after {} was stopped", newLeader.id(), (System.nanoTime() - killed) / 1_000_000,
                oldLeader.id());

        List<TestNode> survivors = cluster.running();
        await("every message received, acknowledged and deleted on both remaining nodes")
                .atMost(Duration.ofSeconds(120))
                .until(() -> log.receivedAll(published)
                        && survivors.stream().allMatch(n -> StoreImage.countTopic(n.node().store(), TOPIC) == 0));
        LOG.info("all consumed {} ms after the failover: {}", (System.nanoTime() - killed) / 1_000_000, log.summary());

        // The old leader comes back from its own data: it must not bring deleted messages back.
        oldLeader.startAgain();
        StoreImage.awaitIdentical(cluster.running(), Duration.ofSeconds(60), "the old leader caught up");
        assertEquals(0, StoreImage.countTopic(oldLeader.node().store(), TOPIC), "nothing resurrected on the old leader");
        LOG.info("{} rejoined and agrees with the others", oldLeader.id());
        // Give a wrongly resurrected message every chance to show up: a dispatcher pass that
        // delivers a fresh message has scanned everything of the topic due before it.
        long markerSent = System.nanoTime();
        String marker = client.publish(Message.of(TOPIC, "marker")).id();
        long markerCommitted = System.nanoTime();
        await("the marker delivered").atMost(Duration.ofSeconds(30)).until(() -> log.receivedAll(Set.of(marker)));
        LOG.info("marker committed in {} ms, delivered {} ms later", (markerCommitted - markerSent) / 1_000_000,
                (System.nanoTime() - markerCommitted) / 1_000_000);

        assertEquals(List.of(), log.missing(published, 20), "published but never delivered");
        assertEquals(List.of(), log.deliveredAfterConfirmation(), "delivered again after its confirmed ACK completed");
        assertEquals(List.of(), log.deliveredBeforeDue(), "delivered before due");
        LOG.info("failover test done in {} ms: {}", (System.nanoTime() - started) / 1_000_000, log.summary());
    }
}
