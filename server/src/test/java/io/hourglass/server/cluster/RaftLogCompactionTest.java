package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.Subscription;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Under a steady publish/ack load the Raft log does not grow without bound: snapshots are taken
 * every {@code raft.snapshotEveryEntries} entries and the log before them is purged, on every node.
 *
 * <p>The bound, with the settings of {@link SnapshotCatchUpTest#SMALL_LOG} (snapshot every 100
 * entries, 64 KiB segments, purge gap 10) and this load (publish entries of 16 messages of 300
 * bytes, ≈ 5.5 KiB each with Raft and protobuf framing; delete entries of ≈ 31 bytes per ACK):
 * <ul>
 *   <li>entries since the last snapshot: at most 100 publish entries (≈ 550 KiB) plus the deletes
 *       of the at most three rounds they span (3 × 960 ACKs × 31 B ≈ 90 KiB);
 *   <li>a closed segment that straddles the snapshot index, and the open (preallocated) segment:
 *       2 × 64 KiB;
 *   <li>Raft metadata (term, vote, configuration, lock): a few KiB.
 * </ul>
 * That is ≈ 770 KiB; the bound is 1 MiB. The leader's group commit would merge concurrent publish
 * requests into larger entries (the snapshot trigger counts entries, not bytes), so this test lets
 * 64 publish entries be replicated at once: each request stays its own entry of 16 messages. The load writes more than three times that into the
 * log — an unpurged log would pass the bound by the fourth round.
 */
@Timeout(180)
class RaftLogCompactionTest {
    private static final Logger LOG = LoggerFactory.getLogger(RaftLogCompactionTest.class);
    private static final String TOPIC = "compaction";
    private static final int ROUNDS = 12;
    private static final int MESSAGES_PER_ROUND = 960;
    private static final int MESSAGES_PER_ENTRY = 16;
    private static final String PAYLOAD = "p".repeat(300);
    private static final long BOUND_BYTES = 1 << 20;

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    @Test
    void theRaftLogStaysBoundedUnderSteadyPublishAndAck() {
        Map<String, String> settings = new LinkedHashMap<>(SnapshotCatchUpTest.SMALL_LOG);
        settings.put("raft.publishEntriesInFlight", "64");
        TestCluster cluster = resources.start(dir, 3, settings);
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList())
                .maxBatchMessages(MESSAGES_PER_ENTRY).build());
        DeliveryLog log = new DeliveryLog();
        Subscription consumer = client.subscribe(TOPIC, "g", (m, ctx) -> {
            log.received("consumer", m);
            ctx.ack();
        });
        await("the consumer is subscribed").atMost(Duration.ofSeconds(30)).until(consumer::isSubscribed);

        Map<String, List<Long>> sizes = new LinkedHashMap<>();
        cluster.nodes().forEach(n -> sizes.put(n.id(), new ArrayList<>()));
        long payloadBytes = 0;
        for (int round = 0; round < ROUNDS; round++) {
            int r = round;
            Set<String> ids = client.publishBatch(IntStream.range(0, MESSAGES_PER_ROUND)
                            .mapToObj(i -> Message.of(TOPIC, r + "-" + i + "-" + PAYLOAD)).toList())
                    .stream().map(PublishResult::id).collect(Collectors.toSet());
            payloadBytes += (long) MESSAGES_PER_ROUND * PAYLOAD.length();
            await("round " + round + " consumed, acknowledged and deleted on every node").atMost(Duration.ofSeconds(60))
                    .until(() -> log.receivedAll(ids) && cluster.running().stream()
                            .allMatch(n -> StoreImage.countTopic(n.node().store(), TOPIC) == 0));
            for (TestNode n : cluster.nodes()) {
                sizes.get(n.id()).add(n.ratisDirBytes());
            }
            LOG.info("after round {}: ratis dir sizes {}", round,
                    cluster.nodes().stream().map(n -> n.id() + "=" + n.ratisDirBytes()).toList());
        }

        assertTrue(payloadBytes > 3 * BOUND_BYTES, "the load is large enough to show the bound: " + payloadBytes);
        for (TestNode n : cluster.nodes()) {
            long max = sizes.get(n.id()).stream().mapToLong(Long::longValue).max().orElseThrow();
            assertTrue(max <= BOUND_BYTES, n.id() + "'s " + n.ratisDir() + " grew to " + max + " bytes, beyond "
                    + BOUND_BYTES + "; sizes per round: " + sizes.get(n.id()));
            assertTrue(n.node().raft().stateMachine().snapshotsTaken() > 0, n.id() + " took snapshots");
        }
        LOG.info("ratis dir sizes per round: {}; {}", sizes, log.summary());
    }
}
