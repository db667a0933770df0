package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.Subscription;
import io.hourglass.core.delivery.Consumer;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leadership moves (Ratis' own transfer, as {@code hourglass cluster transfer-leader} does) while
 * two competing consumers are busy and publishes are in flight. Nothing is lost, and the
 * consumers end up on the new leader without the application doing anything.
 */
@Timeout(180)
class LeadershipTransferTest {
    private static final Logger LOG = LoggerFactory.getLogger(LeadershipTransferTest.class);
    private static final String TOPIC = "transfer";
    private static final String GROUP = "g";
    private static final int PER_PHASE = 300;

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    @Test
    void consumersFollowATransferredLeadershipAndNothingIsLost() {
        TestCluster cluster = resources.start(dir, 3, Map.of());
        // Small batches, so that the publishes made during the transfer are many requests.
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList())
                .maxBatchMessages(10).build());
        DeliveryLog log = new DeliveryLog();
        Subscription a = client.subscribe(TOPIC, GROUP, (m, ctx) -> {
            log.received("a", m);
            log.ackConfirmed(m, ctx);
        });
        Subscription b = client.subscribe(TOPIC, GROUP, (m, ctx) -> {
            log.received("b", m);
            log.ackConfirmed(m, ctx);
        });
        TestNode from = cluster.leader().orElseThrow();
        await("both consumers are served by the leader " + from.id()).atMost(Duration.ofSeconds(30))
                .until(() -> a.isSubscribed() && b.isSubscribed() && consumersOf(from) == 2);

        // Due over four seconds, so that deliveries are still going on when leadership moves.
        Set<String> expected = new HashSet<>(ids(client.publishBatch(IntStream.range(0, PER_PHASE)
                .mapToObj(i -> Message.builder(TOPIC).payload("before-" + i)
                        .delay(Duration.ofMillis(i * 4_000L / PER_PHASE)).build()).toList())));
        await("deliveries are flowing").atMost(Duration.ofSeconds(30)).until(() -> log.deliveryCount() >= 30);

        List<CompletableFuture<PublishResult>> during = IntStream.range(0, PER_PHASE)
                .mapToObj(i -> client.publishAsync(Message.of(TOPIC, "during-" + i))).toList();
        TestNode to = cluster.followers().get(0);
        long mark = log.mark();
        long transferStarted = System.nanoTime();
        // Ratis may lose a transfer to a follower a few entries behind on a busy machine: the
        // election it triggers is won by the old leader (CI) or by the third node (CI again),
        // DIFFERENT_LEADER. The operator asks the leader of the moment again, so does the test, at
        // most three times. What is tested is the consumers following the move.
        TestNode asked = from;
        for (int attempt = 1; ; attempt++) {
            try {
                asked.transferLeadershipTo(to, Duration.ofSeconds(20));
                break;
            } catch (IllegalStateException e) {
                if (attempt == 3 || !e.getMessage().contains("DIFFERENT_LEADER")) {
                    throw e;
                }
                LOG.info("transfer attempt {} lost ({}); asking again", attempt, e.getMessage());
                asked = cluster.awaitLeader();
                if (asked == to) {
                    break;
                }
            }
        }
        await(to.id() + " leads").atMost(Duration.ofSeconds(30)).until(() -> to.node().isLeader());
        LOG.info("leadership moved from {} to {} in {} ms", from.id(), to.id(),
                (System.nanoTime() - transferStarted) / 1_000_000);

        await("both consumers moved to the new leader " + to.id() + " on their own").atMost(Duration.ofSeconds(30))
                .until(() -> consumersOf(to) == 2 && consumersOf(from) == 0 && a.isSubscribed() && b.isSubscribed());
        await("every publish made during the transfer completed").atMost(Duration.ofSeconds(60))
                .until(() -> during.stream().allMatch(CompletableFuture::isDone));
        for (CompletableFuture<PublishResult> f : during) {
            expected.add(f.join().id()); // throws if a publish failed across the transfer
        }
        expected.addAll(ids(client.publishBatch(IntStream.range(0, PER_PHASE)
                .mapToObj(i -> Message.of(TOPIC, "after-" + i)).toList())));
        assertEquals(3 * PER_PHASE, expected.size());

        await("every message delivered, acknowledged and deleted on every node").atMost(Duration.ofSeconds(60))
                .until(() -> log.receivedAll(expected) && cluster.running().stream()
                        .allMatch(n -> StoreImage.countTopic(n.node().store(), TOPIC) == 0));
        assertTrue(log.receivedBy("a", mark) > 0 && log.receivedBy("b", mark) > 0,
                "both consumers received deliveries after the transfer began: a " + log.receivedBy("a", mark)
                        + ", b " + log.receivedBy("b", mark));
        assertEquals(List.of(), log.deliveredAfterConfirmation(), "delivered again after its confirmed ACK completed");
        assertEquals(List.of(), log.deliveredBeforeDue(), "delivered before due");
        LOG.info("done: {}", log.summary());
    }

    /**
     * Plain ACKs wait for the next delete batch; a leader that hands its leadership over — asked to
     * (`cluster transfer-leader`) or closing (a rolling restart) — replicates them first, so the next
     * leader does not deliver those messages again. The batch interval is an hour here: only that
     * flush can have replicated them.
     */
    @Test
    void plainAcksTakenBeforeATransferAreNotDeliveredAgain() {
        ackThenMoveLeadership("acked-then-transferred", (from, to) -> {
            try { // the node's own transfer, as `hourglass cluster transfer-leader` asks it
                from.node().raft().admin().transferLeadership(to.id(), Duration.ofSeconds(20));
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    @Test
    void plainAcksTakenBeforeTheLeaderClosesAreNotDeliveredAgain() {
        ackThenMoveLeadership("acked-then-closed", (from, to) -> from.stop());
    }

    private void ackThenMoveLeadership(String topic, java.util.function.BiConsumer<TestNode, TestNode> move) {
        TestCluster cluster = resources.start(dir, 3, Map.of("delivery.deleteBatchInterval", "1h"));
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        java.util.Map<String, Integer> deliveries = new java.util.concurrent.ConcurrentHashMap<>();
        Subscription s = client.subscribe(topic, GROUP, (m, ctx) -> {
            deliveries.merge(m.payloadUtf8(), 1, Integer::sum);
            ctx.ack();
        });
        TestNode from = cluster.leader().orElseThrow();
        await("subscribed on " + from.id()).atMost(Duration.ofSeconds(30))
                .until(() -> s.isSubscribed() && from.node().engine().hub().consumers().size() == 1);
        client.publishBatch(IntStream.range(0, 50).mapToObj(i -> Message.of(topic, "m-" + i)).toList());
        await("all 50 acknowledged to the leader, their deletions queued").atMost(Duration.ofSeconds(30))
                .until(() -> deliveries.size() == 50 && from.node().engine().queuedDeletions() == 50);

        TestNode to = cluster.followers().get(0);
        move.accept(from, to);
        TestNode next = cluster.awaitLeader();
        await(next.id() + " leads and the consumer follows").atMost(Duration.ofSeconds(30))
                .until(() -> s.isSubscribed() && next.node().engine().hub().consumers().size() == 1);
        // A message published now is dispatched after any redelivery of the older keys would be.
        client.publish(Message.of(topic, "marker"));
        await("the marker arrives").atMost(Duration.ofSeconds(30)).until(() -> deliveries.containsKey("marker"));
        assertEquals(Map.of(), deliveries.entrySet().stream().filter(e -> e.getValue() > 1)
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)), "delivered again after the move");
        assertEquals(1, StoreImage.countTopic(next.node().store(), topic), "only the marker is stored");
    }

    private static long consumersOf(TestNode node) {
        return node.node().engine().hub().consumers().stream().map(Consumer::topic).filter(TOPIC::equals).count();
    }

    private static List<String> ids(List<PublishResult> results) {
        return results.stream().map(PublishResult::id).collect(Collectors.toList());
    }
}
