package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.raft.RaftHost;
import io.hourglass.raft.RaftNode;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An add-node that failed half-way (here: the new node made a voter of the metadata group only, as an
 * add does first, and registered) is finished by asking again: the node joins every shard's group it
 * misses, instead of the call answering "already a member" because the metadata group has it — which
 * left a chaos run's joiner outside two shards, ready never.
 */
@Timeout(300)
class HalfAddedNodeTest {
    private static final int SHARDS = 2;

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    @Test
    void askingAgainAddsTheNodeToTheShardsItMisses() throws Exception {
        TestCluster cluster = resources.start(dir, 3, Map.of("cluster.shards", Integer.toString(SHARDS)));
        await("every shard and the metadata group have a leader").atMost(Duration.ofSeconds(60)).until(() ->
                IntStream.range(-1, SHARDS).allMatch(s -> leaderOf(cluster, s) != null));
        TestNode joiner = cluster.startJoiner();
        Map<String, String> js = cluster.settingsOf(joiner);
        int raftPort = Integer.parseInt(js.get("raft.port"));
        int grpcPort = Integer.parseInt(js.get("grpc.port"));

        RaftNode meta = leaderOf(cluster, RaftHost.METADATA);
        meta.propose(io.hourglass.core.command.ClusterCommands.registerPeer(joiner.id(), "127.0.0.1:" + grpcPort))
                .get();
        addToOneGroupOnly(meta, RaftHost.groupId(RaftHost.METADATA), joiner.id(), "127.0.0.1:" + raftPort);
        await("the half-added node is a voter of the metadata group").atMost(Duration.ofSeconds(60))
                .until(() -> leaderOf(cluster, RaftHost.METADATA).admin().members().size() == 4);
        for (int s = 0; s < SHARDS; s++) {
            assertEquals(3, leaderOf(cluster, s).admin().members().size(), "shard " + s + " does not have it yet");
        }

        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        List<String> voters = new ArrayList<>();
        await("add-node, asked again, finishes the add").atMost(Duration.ofSeconds(90))
                .ignoreExceptionsInstanceOf(io.hourglass.client.UnavailableException.class).until(() -> {
                    voters.addAll(client.admin().addNode(joiner.id(), "127.0.0.1", raftPort, grpcPort).getVotersList());
                    return true;
                });
        assertTrue(voters.contains(joiner.id()), voters.toString());
        for (int s = 0; s < SHARDS; s++) {
            int shard = s;
            await("shard " + s + " has the node and it applies the shard's entries").atMost(Duration.ofSeconds(90))
                    .until(() -> {
                        RaftNode leader = leaderOf(cluster, shard);
                        RaftNode mine = joiner.node().raftHost().shard(shard);
                        return leader != null && leader.admin().members().stream().anyMatch(m -> m.id().equals(joiner.id()))
                                && mine.status().appliedIndex() >= leader.status().commitIndex() - 5;
                    });
        }
        assertEquals("127.0.0.1:" + grpcPort, meta.grpcAddressOf(joiner.id()), "the registered address is kept");
        var again = org.junit.jupiter.api.Assertions.assertThrows(io.hourglass.client.HourglassClientException.class,
                () -> client.admin().addNode(joiner.id(), "127.0.0.1", raftPort, grpcPort));
        assertTrue(again.getMessage().contains("already a member"), again.getMessage());
    }

    /** The leading replica of {@code shard} (or of the metadata group), or null. */
    private static RaftNode leaderOf(TestCluster cluster, int shard) {
        return cluster.running().stream()
                .map(n -> shard == RaftHost.METADATA ? n.node().raftHost().metadata() : n.node().raftHost().shard(shard))
                .filter(RaftNode::isLeader).findFirst().orElse(null);
    }

    /** What an add-node does for one group, with Ratis' own calls: the new node creates the group, then the leader commits it. */
    private static void addToOneGroupOnly(RaftNode leader, RaftGroupId group, String id, String raftAddress)
            throws Exception {
        List<RaftPeer> peers = new ArrayList<>();
        for (RaftNode.Member m : leader.admin().members()) {
            peers.add(RaftPeer.newBuilder().setId(m.id()).setAddress(m.raftAddress()).build());
        }
        RaftPeer added = RaftPeer.newBuilder().setId(id).setAddress(raftAddress).build();
        peers.add(added);
        try (RaftClient toNew = RaftClient.newBuilder().setProperties(new RaftProperties())
                .setRaftGroup(RaftGroup.valueOf(group, added)).build()) {
            RaftClientReply created = toNew.getGroupManagementApi(added.getId()).add(RaftGroup.valueOf(group, peers));
            assertTrue(created.isSuccess(), String.valueOf(created.getException()));
        }
        try (RaftClient toGroup = RaftClient.newBuilder().setProperties(new RaftProperties())
                .setRaftGroup(RaftGroup.valueOf(group, peers.subList(0, peers.size() - 1))).build()) {
            RaftClientReply changed = toGroup.admin().setConfiguration(peers);
            assertTrue(changed.isSuccess(), String.valueOf(changed.getException()));
        }
    }
}
