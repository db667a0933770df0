package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.Subscription;
import io.hourglass.core.storage.TermIndex;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stopped node comes back on its own data directory — first a follower, then the leader — and
 * rejoins: it reopens its store where it stopped (not empty), catches up on what was committed
 * while it was away, and ends with the same store as the others. Messages published around the
 * restarts are all delivered.
 */
@Timeout(180)
class RestartRejoinTest {
    private static final Logger LOG = LoggerFactory.getLogger(RestartRejoinTest.class);
    private static final String TOPIC = "rejoin";
    private static final String GROUP = "g";
    private static final int PER_PHASE = 200;

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    @Test
    void aRestartedFollowerAndARestartedLeaderRejoinFromTheirOwnData() {
        TestCluster cluster = resources.start(dir, 3, Map.of());
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        DeliveryLog log = new DeliveryLog();
        Subscription consumer = client.subscribe(TOPIC, GROUP, (m, ctx) -> {
            log.received("consumer", m);
            log.ackConfirmed(m, ctx);
        });
        await("the consumer is subscribed").atMost(Duration.ofSeconds(30)).until(consumer::isSubscribed);
        // Messages that stay stored (nobody consumes this topic), so every store has content to compare.
        publish(client, "rejoin-kept", "kept", 100);
        Set<String> expected = new HashSet<>(publish(client, TOPIC, "all-up", PER_PHASE));
        awaitReceived(log, expected, "all up");

        TestNode follower = cluster.followers().get(0);
        restartAndRejoin(cluster, follower, client, log, expected, "follower-away");

        TestNode leader = cluster.leader().orElseThrow();
        restartAndRejoin(cluster, leader, client, log, expected, "leader-away");

        await("every message of " + TOPIC + " acknowledged and deleted on every node").atMost(Duration.ofSeconds(60))
                .until(() -> cluster.running().stream().allMatch(n -> StoreImage.countTopic(n.node().store(), TOPIC) == 0));
        StoreImage image = StoreImage.awaitIdentical(cluster.running(), Duration.ofSeconds(60),
                "all three stores agree at the end");
        assertEquals(300, image.countTopic("rejoin-kept"), "messages of the unconsumed topic, kept everywhere");
        assertEquals(List.of(), log.deliveredAfterConfirmation(), "delivered again after its confirmed ACK completed");
        LOG.info("done: {}", log.summary());
    }

    /**
     * Stops {@code node}, publishes while it is away, starts it again on the same directory and
     * waits until its store equals the others'.
     */
    private static void restartAndRejoin(TestCluster cluster, TestNode node, HourglassClient client, DeliveryLog log,
                                         Set<String> expected, String phase) {
        TermIndex atStop = node.node().store().appliedIndex();
        Map<String, Set<String>> registryAtStop = node.node().store().topicRegistry();
        node.stop();
        TestNode leader = cluster.awaitLeaderOtherThan(node, Duration.ofSeconds(30));
        LOG.info("{} stopped at {}; {} leads", node.id(), atStop, leader.id());
        publish(client, "rejoin-kept", phase, 100);
        expected.addAll(publish(client, TOPIC, phase, PER_PHASE));
        awaitReceived(log, expected, node.id() + " away");

        node.startAgain();
        TermIndex atStart = node.node().store().appliedIndex();
        assertTrue(atStart.index() >= atStop.index(),
                node.id() + " reopened its own store at " + atStart + ", not before where it stopped (" + atStop + ")");
        assertEquals(registryAtStop, node.node().store().topicRegistry(), node.id() + " reopened with its durable groups");
        StoreImage.awaitIdentical(cluster.running(), Duration.ofSeconds(60), node.id() + " caught up after its restart");
        assertTrue(node.node().store().appliedIndex().index() > atStop.index(),
                node.id() + " applied what was committed while it was away");
    }

    private static List<String> publish(HourglassClient client, String topic, String phase, int n) {
        return client.publishBatch(IntStream.range(0, n).mapToObj(i -> Message.of(topic, phase + "-" + i)).toList())
                .stream().map(PublishResult::id).toList();
    }

    private static void awaitReceived(DeliveryLog log, Set<String> ids, String phase) {
        await("every message delivered with " + phase).atMost(Duration.ofSeconds(60))
                .until(() -> log.receivedAll(ids));
    }
}
