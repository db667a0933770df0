package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.Subscription;
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
 * A follower that lost its disk comes back empty while the leader has already compacted its log
 * past the start: it cannot replay the log and must install a snapshot (the leader's store
 * checkpoint). Afterwards it holds exactly what the others hold — every message, receipt, durable
 * group and the applied position.
 */
@Timeout(180)
class SnapshotCatchUpTest {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotCatchUpTest.class);
    /** Snapshot (and purge) every 100 entries, in 64 KiB log segments: compaction within seconds. */
    static final Map<String, String> SMALL_LOG = Map.of("raft.snapshotEveryEntries", "100", "raft.purgeGap", "10",
            "raft.logSegmentBytes", Integer.toString(64 << 10));
    private static final String TOPIC = "catchup";
    private static final String OTHER_TOPIC = "catchup-other";
    /** Makes entries about 2 KiB, some 30 to a segment, so that segments close and get purged. */
    private static final String PADDING = "x".repeat(480);

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    @Test
    void wipedFollowerCatchesUpThroughASnapshotAndHoldsTheSameData() {
        TestCluster cluster = resources.start(dir, 3, SMALL_LOG);
        // Four messages per request: each request is one log entry, so the log grows quickly.
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList())
                .maxBatchMessages(4).build());
        TestNode follower = cluster.followers().get(0);

        // Durable groups: "a" acknowledges everything; "b" and "c" never do, so messages stay
        // stored with receipts of "a" — state beyond messages that the snapshot must carry.
        DeliveryLog log = new DeliveryLog();
        Subscription a = client.subscribe(TOPIC, "a", (m, ctx) -> {
            log.received("a", m);
            log.ackConfirmed(m, ctx);
        });
        registerGroup(client, TOPIC, "b");
        registerGroup(client, OTHER_TOPIC, "c");
        await("group a is subscribed").atMost(Duration.ofSeconds(30)).until(a::isSubscribed);

        Set<String> acknowledged = new HashSet<>(publish(client, TOPIC, "before", 200));
        publish(client, OTHER_TOPIC, "before", 40);
        awaitConfirmed(log, acknowledged);

        follower.stop();
        cluster.wipe(follower);
        LOG.info("{} stopped and wiped", follower.id());
        acknowledged.addAll(publish(client, TOPIC, "while-wiped", 800));
        publish(client, OTHER_TOPIC, "while-wiped", 100);
        awaitConfirmed(log, acknowledged);
        a.close();

        TestNode leader = cluster.awaitLeader();
        leader.takeSnapshot(Duration.ofSeconds(20));
        await("the leader compacted its log past its first entry, so the wiped follower cannot replay it")
                .atMost(Duration.ofSeconds(30))
                .until(() -> leader.raftLogStartIndex() > 0);
        long startIndex = leader.raftLogStartIndex();
        LOG.info("leader log starts at {}, applied {}, {} snapshots", startIndex, leader.node().store().appliedIndex(),
                leader.node().raft().stateMachine().snapshotsTaken());

        follower.startAgain();
        StoreImage image = StoreImage.awaitIdentical(cluster.running(), Duration.ofSeconds(90),
                "the wiped follower caught up with the leader and the other follower");
        assertEquals(3, cluster.running().size());

        assertEquals(Map.of(TOPIC, Set.of("a", "b"), OTHER_TOPIC, Set.of("c")), image.registry(), "durable groups");
        assertEquals(1_000, image.countTopic(TOPIC), "every message of " + TOPIC + " (group b has acknowledged none)");
        assertEquals(140, image.countTopic(OTHER_TOPIC), "every message of " + OTHER_TOPIC);
        assertEquals(1_000, image.receipts().size(), "a receipt of group a for every message of " + TOPIC);
        assertEquals(leader.node().store().appliedIndex(), follower.node().store().appliedIndex(), "applied position");
        assertTrue(follower.node().raft().stateMachine().snapshotsInstalled() > 0,
                "the wiped follower installed a checkpoint from the leader");
        // Its log holds only entries after the checkpoint. An idle group appends nothing (Ratis'
        // commit-index entries are off), so an empty log says nothing yet: one more write.
        publish(client, OTHER_TOPIC, "after", 1);
        await("the wiped follower appended the write after its checkpoint").atMost(Duration.ofSeconds(30))
                .until(() -> follower.raftLogStartIndex() > 0);
        assertTrue(follower.raftLogStartIndex() >= startIndex, "the wiped follower's log starts past the leader's"
                + " log start when it came back (" + startIndex + "), not at the beginning: "
                + follower.raftLogStartIndex());
        assertTrue(leader.node().raft().stateMachine().snapshotsTaken() > 0, "the leader took snapshots");
    }

    /** Subscribes once, so that the group becomes durable, then leaves. */
    private static void registerGroup(HourglassClient client, String topic, String group) {
        try (Subscription s = client.subscribe(topic, group, (m, ctx) -> { })) {
            await("group " + group + " of " + topic + " registered").atMost(Duration.ofSeconds(30))
                    .until(s::isSubscribed);
        }
    }

    /** Publishes {@code n} messages of about 500 bytes (four to a log entry); returns their ids. */
    private static List<String> publish(HourglassClient client, String topic, String phase, int n) {
        return client.publishBatch(IntStream.range(0, n)
                        .mapToObj(i -> Message.of(topic, phase + "-" + i + "-" + PADDING)).toList())
                .stream().map(PublishResult::id).toList();
    }

    private static void awaitConfirmed(DeliveryLog log, Set<String> ids) {
        await("group a's confirmed ACKs of " + ids.size() + " messages").atMost(Duration.ofSeconds(60))
                .until(() -> log.confirmedAll(ids));
    }
}
