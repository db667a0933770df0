package io.hourglass.server.replica;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.RaftNode;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A follower whose data was wiped catches up by installing the leader's store checkpoint. */
@Timeout(240)
class SnapshotInstallTest {
    @TempDir
    Path dir;

    private static Map<String, String> contents(EventStore store) {
        Map<String, String> m = new TreeMap<>();
        store.queue().scanAll((k, v) -> m.put(k.toHex(), v.toString()) == null);
        return m;
    }

    private static void publishEntries(HourglassClient client, String topic, int n) {
        String payload = "x".repeat(512);
        for (int i = 0; i < n; i++) {
            client.publish(Message.of(topic, payload + i)); // one log entry each
        }
    }

    @Test
    void wipedFollowerInstallsTheLeadersCheckpointAndHasTheSameData() throws Exception {
        Map<String, String> small = Map.of("raft.snapshotEveryEntries", "100", "raft.purgeGap", "10",
                "raft.logSegmentBytes", Integer.toString(64 << 10));
        try (TestCluster cluster = TestCluster.start(dir, 3, small);
             HourglassClient client = HourglassClient.builder().servers(cluster.targets().split(",")).build()) {
            TestNode leader = cluster.awaitLeader();
            TestNode follower = cluster.followers().get(0);
            publishEntries(client, "before", 150);
            follower.stop();
            cluster.wipe(follower);
            publishEntries(client, "while-down", 350);
            await("the leader purged its log").atMost(Duration.ofSeconds(60)).until(() ->
                    leader.node().raft().server().getDivision(RaftNode.GROUP_ID).getRaftLog().getStartIndex() > 1);

            follower.startAgain();
            await("the wiped follower caught up").atMost(Duration.ofSeconds(90)).until(() ->
                    follower.node().store().appliedIndex().index() >= leader.node().store().appliedIndex().index() - 2
                            && contents(follower.node().store()).size() == 500);
            publishEntries(client, "after", 5);
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    follower.node().store().appliedIndex().equals(leader.node().store().appliedIndex()));
            assertEquals(contents(leader.node().store()), contents(follower.node().store()));
            assertTrue(follower.node().raft().stateMachine().getLastAppliedTermIndex().getIndex() > 300);
        }
    }
}
