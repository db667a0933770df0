package io.hourglass.server.admin;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.hourglass.api.v1.AddNodeRequest;
import io.hourglass.api.v1.AdminGrpc;
import io.hourglass.api.v1.ClusterStatusRequest;
import io.hourglass.api.v1.RemoveNodeRequest;
import io.hourglass.api.v1.TransferLeaderRequest;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.Subscription;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Growing 3 → 5 → 3 voters with AddNode / RemoveNode while a publisher and a consumer run: nothing is lost. */
@Timeout(240)
class MembershipChangeTest {
    @TempDir
    Path dir;

    @Test
    void growAndShrinkUnderLoadLosesNothing() throws Exception {
        try (TestCluster cluster = TestCluster.start(dir, 3, Map.of());
             HourglassClient client = HourglassClient.builder().servers(cluster.targetList().toArray(String[]::new)).build()) {
            ManagedChannel channel = ManagedChannelBuilder.forTarget(cluster.node(1).target()).usePlaintext().build();
            AdminGrpc.AdminBlockingStub admin = AdminGrpc.newBlockingStub(channel);
            Set<String> published = ConcurrentHashMap.newKeySet();
            Set<String> received = ConcurrentHashMap.newKeySet();
            AtomicBoolean publishing = new AtomicBoolean(true);
            AtomicInteger n = new AtomicInteger();
            CompletableFuture<Void> publisher = CompletableFuture.runAsync(() -> {
                while (publishing.get()) {
                    String p = "m" + n.incrementAndGet();
                    client.publish(Message.of("grow", p));
                    published.add(p);
                }
            });
            try (Subscription s = client.subscribe("grow", "g", (m, ctx) -> {
                received.add(m.payloadUtf8());
                ctx.ack();
            })) {
                TestNode n4 = cluster.startJoiner();
                TestNode n5 = cluster.startJoiner();
                for (TestNode joiner : List.of(n4, n5)) {
                    Map<String, String> s4 = cluster.settingsOf(joiner);
                    var voters = admin.withDeadlineAfter(60, TimeUnit.SECONDS).addNode(AddNodeRequest.newBuilder()
                            .setId(joiner.id()).setHost("127.0.0.1").setRaftPort(Integer.parseInt(s4.get("raft.port")))
                            .setGrpcPort(Integer.parseInt(s4.get("grpc.port"))).build()).getVotersList();
                    assertTrue(voters.contains(joiner.id()), voters.toString());
                }
                await("five voters, all up").atMost(Duration.ofSeconds(60)).until(() -> {
                    var st = admin.withDeadlineAfter(10, TimeUnit.SECONDS).clusterStatus(ClusterStatusRequest.getDefaultInstance());
                    return st.getMembersCount() == 5 && st.getMembersList().stream().allMatch(m -> m.getUp());
                });
                long target = cluster.awaitLeader().node().store().appliedIndex().index();
                await("the new members caught up with the leader's position at the time they were added")
                        .atMost(Duration.ofSeconds(60)).until(() -> n4.node().store().appliedIndex().index() >= target
                                && n5.node().store().appliedIndex().index() >= target);

                // Shrink back to three: move leadership off the nodes that go (retrying while a
                // leadership change may be under way), then remove them.
                await("leadership off n1 and n2").atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
                    TestNode leader = cluster.awaitLeader();
                    if (leader == cluster.node(1) || leader == cluster.node(2)) {
                        ManagedChannel via = ManagedChannelBuilder.forTarget(cluster.node(3).target()).usePlaintext().build();
                        try {
                            AdminGrpc.newBlockingStub(via).withDeadlineAfter(30, TimeUnit.SECONDS)
                                    .transferLeader(TransferLeaderRequest.newBuilder().setId("n3").build());
                        } finally {
                            via.shutdownNow();
                        }
                    }
                    TestNode now = cluster.awaitLeader();
                    return now != cluster.node(1) && now != cluster.node(2);
                });
                for (TestNode leaving : List.of(cluster.node(1), cluster.node(2))) {
                    ManagedChannel via3 = ManagedChannelBuilder.forTarget(cluster.node(3).target()).usePlaintext().build();
                    try {
                        AdminGrpc.newBlockingStub(via3).withDeadlineAfter(60, TimeUnit.SECONDS)
                                .removeNode(RemoveNodeRequest.newBuilder().setId(leaving.id()).build());
                    } finally {
                        via3.shutdownNow();
                    }
                }
                cluster.node(1).stop();
                cluster.node(2).stop();
                ManagedChannel via3 = ManagedChannelBuilder.forTarget(cluster.node(3).target()).usePlaintext().build();
                try {
                    var st = AdminGrpc.newBlockingStub(via3).withDeadlineAfter(30, TimeUnit.SECONDS)
                            .clusterStatus(ClusterStatusRequest.getDefaultInstance());
                    assertEquals(Set.of("n3", "n4", "n5"), st.getMembersList().stream().map(m -> m.getNode().getId())
                            .collect(java.util.stream.Collectors.toSet()));
                    assertTrue(st.getHasQuorum());
                } finally {
                    via3.shutdownNow();
                }
                int before = n.get();
                await("publishing continues on n3, n4, n5").atMost(Duration.ofSeconds(60)).until(() -> n.get() > before + 20);
                publishing.set(false);
                publisher.get(60, TimeUnit.SECONDS);
                await("every published message consumed").atMost(Duration.ofSeconds(60))
                        .until(() -> received.containsAll(published));
            } finally {
                publishing.set(false);
                channel.shutdownNow();
            }
        }
    }
}
