package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.hourglass.api.v1.AddNodeRequest;
import io.hourglass.api.v1.AdminGrpc;
import io.hourglass.api.v1.ClusterStatusRequest;
import io.hourglass.api.v1.ClusterStatusResponse;
import io.hourglass.api.v1.MemberStatus;
import io.hourglass.api.v1.RemoveNodeRequest;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.raft.RaftHost;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metadata Raft group: a new cluster runs one next to its event shards on every node, and the
 * peer registry and the shard count live in it, not in shard 0; membership changes reach it (a joining node holds its
 * replica, a removed node leaves it even when it led it); it elects again when its leader goes,
 * while the shards keep serving. A data directory created without one keeps its metadata in shard 0.
 */
@Timeout(300)
class MetadataGroupTest {
    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    private static Optional<TestNode> metadataLeader(TestCluster cluster) {
        return cluster.running().stream().filter(n -> n.node().metadata().isLeader()).findFirst();
    }

    private static ClusterStatusResponse status(TestNode via) {
        ManagedChannel channel = ManagedChannelBuilder.forTarget(via.target()).usePlaintext().build();
        try {
            return AdminGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .clusterStatus(ClusterStatusRequest.getDefaultInstance());
        } finally {
            channel.shutdownNow();
        }
    }

    private static Set<String> ids(java.util.List<MemberStatus> members) {
        return members.stream().map(m -> m.getNode().getId()).collect(Collectors.toSet());
    }

    @Test
    void theMetadataLivesInItsOwnGroupWhichFollowsMembershipAndElectsAgain() throws Exception {
        TestCluster cluster = resources.start(dir, 3, Map.of("cluster.shards", "2"));
        for (TestNode n : cluster.nodes()) {
            assertTrue(n.node().raftHost().hasMetadataGroup(), n.id());
            assertNotSame(n.node().raft(), n.node().metadata(), "shard 0 is not the metadata replica on " + n.id());
            assertEquals(RaftHost.METADATA, n.node().metadata().shardIndex());
            assertTrue(Files.isDirectory(n.dataDir().resolve("db-meta")), "the metadata group's store on " + n.id());
            assertEquals("2\nmetadata-group\n", Files.readString(n.dataDir().resolve("shards"), StandardCharsets.UTF_8));
        }
        await("the metadata group has a leader").atMost(Duration.ofSeconds(60))
                .until(() -> metadataLeader(cluster).isPresent());
        await("the metadata group records the shard count on every node").atMost(Duration.ofSeconds(30))
                .until(() -> cluster.nodes().stream().allMatch(n ->
                        n.node().metadata().store().clusterShards().equals(java.util.OptionalInt.of(2))));
        // Every group elects on its own: the status has a quorum once each of them has a leader.
        ClusterStatusResponse st = await("a status with every group led").atMost(Duration.ofSeconds(60))
                .until(() -> status(cluster.node(1)), s -> s.getHasQuorum() && !s.getMetadataLeaderId().isEmpty());
        assertEquals(2, st.getShards(), "the recorded shard count");
        assertEquals(6, st.getMembersCount(), "one record per node and event shard: " + st);
        assertEquals(Set.of("n1", "n2", "n3"), ids(st.getMetadataMembersList()));
        assertTrue(st.getMetadataMembersList().stream().allMatch(m -> m.getNode().getShard() == -1 && m.getUp()), st::toString);
        assertEquals(metadataLeader(cluster).orElseThrow().id(), st.getMetadataLeaderId());

        // A node added through the Admin API: its client address goes into the metadata group's
        // store on every node, and into no shard's; the joiner holds the metadata group too.
        TestNode n4 = cluster.startJoiner();
        Map<String, String> s4 = cluster.settingsOf(n4);
        ManagedChannel channel = ManagedChannelBuilder.forTarget(cluster.node(2).target()).usePlaintext().build();
        try {
            AdminGrpc.AdminBlockingStub admin = AdminGrpc.newBlockingStub(channel);
            admin.withDeadlineAfter(90, TimeUnit.SECONDS).addNode(AddNodeRequest.newBuilder().setId("n4")
                    .setHost("127.0.0.1").setRaftPort(Integer.parseInt(s4.get("raft.port")))
                    .setGrpcPort(Integer.parseInt(s4.get("grpc.port"))).build());
            String n4Address = "127.0.0.1:" + s4.get("grpc.port");
            await("every node's metadata store names n4's client address").atMost(Duration.ofSeconds(60))
                    .until(() -> cluster.running().stream().allMatch(n ->
                            n.node().metadata().store().peerAddress("n4").filter(n4Address::equals).isPresent()));
            for (TestNode n : cluster.running()) {
                for (var shard : n.node().shards().all()) {
                    assertFalse(shard.store().peerAddress("n4").isPresent(), "shard " + shard.index() + " of " + n.id());
                }
            }
            await("four voters in the metadata group and in every shard").atMost(Duration.ofSeconds(60)).until(() -> {
                ClusterStatusResponse s = status(cluster.node(1));
                return s.getMetadataMembersCount() == 4 && s.getMembersCount() == 8
                        && s.getMetadataMembersList().stream().allMatch(MemberStatus::getUp);
            });

            // The metadata group's leader is removed: it hands that leadership over itself, and the
            // group elects among the others.
            TestNode metaLeader = metadataLeader(cluster).orElseThrow();
            TestNode shardLeader = cluster.awaitLeader();
            if (metaLeader == shardLeader) {
                TestNode other = cluster.running().stream().filter(n -> n != metaLeader).findFirst().orElseThrow();
                shardLeader.transferLeadershipTo(other, Duration.ofSeconds(30));
            }
            await(metaLeader.id() + " removed").atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
                admin.withDeadlineAfter(60, TimeUnit.SECONDS)
                        .removeNode(RemoveNodeRequest.newBuilder().setId(metaLeader.id()).build());
                return true;
            });
            metaLeader.stop();
        } finally {
            channel.shutdownNow();
        }
        await("another node leads the metadata group").atMost(Duration.ofSeconds(60))
                .until(() -> metadataLeader(cluster).isPresent());
        TestNode via = cluster.running().get(0);
        await("three voters, all up").atMost(Duration.ofSeconds(60)).until(() -> {
            ClusterStatusResponse s = status(via);
            return s.getMetadataMembersCount() == 3 && s.getMembersCount() == 6 && s.getHasQuorum();
        });
        try (HourglassClient client = HourglassClient.builder()
                .servers(cluster.running().stream().map(TestNode::target).toList()).build()) {
            assertFalse(client.publish(Message.of("after-meta-change", "x")).id().isEmpty());
        }
    }

    @Test
    void aDataDirectoryCreatedWithoutAMetadataGroupKeepsItsMetadataInShardZero() throws Exception {
        Path data = dir.resolve("old");
        Map<String, String> settings = new HashMap<>(Map.of("cluster.metadataGroup", "false"));
        TestNode node = resources.own(TestNode.start(data, settings));
        assertFalse(node.node().raftHost().hasMetadataGroup());
        assertSame(node.node().raft(), node.node().metadata());
        node.stop();
        assertEquals("1\n", Files.readString(data.resolve("shards"), StandardCharsets.UTF_8));

        // Started again with the default (a metadata group for new clusters): the directory decides.
        TestNode again = resources.own(TestNode.start(data, Map.of()));
        assertFalse(again.node().raftHost().hasMetadataGroup(), "the directory was created without a metadata group");
        assertSame(again.node().raft(), again.node().metadata());
        assertFalse(Files.exists(data.resolve("db-meta")));
    }
}
