package io.hourglass.server.admin;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.hourglass.api.v1.AddNodeRequest;
import io.hourglass.api.v1.AdminGrpc;
import io.hourglass.api.v1.ClusterStatusRequest;
import io.hourglass.api.v1.DeleteGroupRequest;
import io.hourglass.api.v1.ListConsumersRequest;
import io.hourglass.api.v1.ListGroupsRequest;
import io.hourglass.api.v1.ListTopicsRequest;
import io.hourglass.api.v1.MemberStatus;
import io.hourglass.api.v1.PeekTopicRequest;
import io.hourglass.api.v1.PurgeTopicRequest;
import io.hourglass.api.v1.RemoveNodeRequest;
import io.hourglass.api.v1.SnapshotRequest;
import io.hourglass.api.v1.TopicStatsRequest;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The Admin API on a real 3-node cluster, every call sent to a follower to prove any node serves. */
@Timeout(180)
class AdminServiceTest {
    @TempDir
    static Path dir;
    private static TestCluster cluster;
    private static ManagedChannel channel;
    private static AdminGrpc.AdminBlockingStub admin;
    private static HourglassClient client;

    @BeforeAll
    static void start() {
        cluster = TestCluster.start(dir, 3, Map.of());
        channel = ManagedChannelBuilder.forTarget(cluster.followers().get(0).target()).usePlaintext().build();
        admin = AdminGrpc.newBlockingStub(channel);
        client = HourglassClient.builder().servers(cluster.targetList().toArray(String[]::new)).build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        client.close();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        cluster.close();
    }

    private static AdminGrpc.AdminBlockingStub admin() {
        return admin.withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    private static Status.Code code(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    @Test
    void clusterStatusShowsEveryMemberTheLeaderAndQuorum() {
        var status = admin().clusterStatus(ClusterStatusRequest.getDefaultInstance());
        assertEquals(3, status.getMembersCount());
        assertTrue(status.getHasQuorum());
        assertEquals(cluster.awaitLeader().id(), status.getLeaderId());
        for (MemberStatus m : status.getMembersList()) {
            assertTrue(m.getUp(), m.toString());
            assertTrue(m.getNode().getTerm() > 0 && m.getNode().getAppliedIndex() > 0, m.toString());
            assertTrue(!m.getNode().getAddress().isEmpty() && !m.getNode().getRaftAddress().isEmpty());
        }
    }

    @Test
    void topicsGroupsAndConsumersAreReportedAndManaged() {
        client.publishBatch(IntStream.range(0, 5).mapToObj(i -> Message.of("adm-t", "m" + i)).toList());
        client.publish(Message.builder("adm-t").payload("later").delay(Duration.ofHours(1)).build());
        AtomicInteger acked = new AtomicInteger();
        try (Subscription s = client.subscribe("adm-t", "billing", (m, ctx) -> ctx.ackConfirmed().thenRun(acked::incrementAndGet))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> acked.get() == 5);
            var consumers = admin().listConsumers(ListConsumersRequest.newBuilder().setTopic("adm-t").build());
            assertEquals(1, consumers.getConsumersCount());
            assertEquals("billing", consumers.getConsumers(0).getGroup());
        }
        var stats = admin().topicStats(TopicStatsRequest.newBuilder().setTopic("adm-t").build());
        assertEquals(1, stats.getPending(), "five acknowledged by the only group, one scheduled");
        assertEquals(1, stats.getScheduled());
        assertEquals(List.of("billing"), stats.getGroupsList());
        assertTrue(admin().listTopics(ListTopicsRequest.getDefaultInstance()).getTopicsList().stream()
                .anyMatch(t -> t.getTopic().equals("adm-t")));
        assertEquals("later", admin().peekTopic(PeekTopicRequest.newBuilder().setTopic("adm-t").build())
                .getMessages(0).getPayload().toStringUtf8());
        assertEquals(1, admin().listGroups(ListGroupsRequest.newBuilder().setTopic("adm-t").build()).getGroups(0).getPending());

        assertEquals(1, admin().purgeTopic(PurgeTopicRequest.newBuilder().setTopic("adm-t").build()).getPurged());
        assertEquals(0, admin().topicStats(TopicStatsRequest.newBuilder().setTopic("adm-t").build()).getPending());
        admin().deleteGroup(DeleteGroupRequest.newBuilder().setTopic("adm-t").setGroup("billing").build());
        assertEquals(Status.Code.NOT_FOUND, code(() -> admin().topicStats(TopicStatsRequest.newBuilder().setTopic("adm-t").build())));
    }

    /**
     * The figures of `topic stats` and `topic groups` (read from counters and key indexes, not from
     * every message): two durable groups, one of which acknowledged what was due, messages due now, in
     * a minute, in two hours, and with a TTL.
     */
    @Test
    void topicFiguresCountDueScheduledExpiringAndPerGroup() {
        String topic = "adm-f";
        try (Subscription slow = client.subscribe(topic, "slow", (m, ctx) -> { })) { // durable; acknowledges nothing
            await().atMost(Duration.ofSeconds(30)).until(slow::isSubscribed);
        }
        List<Message> batch = new java.util.ArrayList<>();
        IntStream.range(0, 10).forEach(i -> batch.add(Message.of(topic, "now" + i)));
        batch.add(Message.builder(topic).payload("ttl").ttl(Duration.ofSeconds(30)).build());
        IntStream.range(0, 3).forEach(i -> batch.add(Message.builder(topic).payload("soon").delay(Duration.ofSeconds(50)).build()));
        IntStream.range(0, 2).forEach(i -> batch.add(Message.builder(topic).payload("later").delay(Duration.ofHours(2)).build()));
        client.publishBatch(batch);
        AtomicInteger acked = new AtomicInteger();
        try (Subscription s = client.subscribe(topic, "fast", (m, ctx) -> ctx.ackConfirmed().thenRun(acked::incrementAndGet))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> acked.get() == 11);
            var stats = admin().topicStats(TopicStatsRequest.newBuilder().setTopic(topic).build());
            assertEquals(16, stats.getPending(), "nothing is gone while slow has acknowledged nothing");
            assertEquals(11, stats.getDueNow());
            assertEquals(5, stats.getScheduled());
            assertEquals(14, stats.getDueWithin1M(), "due now and in 50 s");
            assertEquals(14, stats.getDueWithin1H());
            assertEquals(16, stats.getDueWithin1D());
            assertEquals(1, stats.getExpiringSoon());
            assertTrue(stats.getOldestDueLatenessMs() >= 0 && stats.getOldestDueLatenessMs() < 60_000, stats.toString());
            assertEquals(Map.of("fast", 5L, "slow", 16L), stats.getPendingPerGroupMap());
            var groups = admin().listGroups(ListGroupsRequest.newBuilder().setTopic(topic).build()).getGroupsList();
            assertEquals(List.of("fast", "slow"), groups.stream().map(g -> g.getGroup()).toList());
            assertEquals(List.of(5L, 0L, 0L, 0L, 0L), groups.get(0).getPendingByDeliveriesList(), "none delivered yet");
            assertEquals(List.of(16L, 0L, 0L, 0L, 0L), groups.get(1).getPendingByDeliveriesList());
        }
        admin().purgeTopic(PurgeTopicRequest.newBuilder().setTopic(topic).build());
    }

    @Test
    void clearErrorsForUnknownTopicsGroupsAndNodes() {
        assertEquals(Status.Code.NOT_FOUND, code(() -> admin().topicStats(TopicStatsRequest.newBuilder().setTopic("nope").build())));
        client.publish(Message.of("adm-e", "x"));
        assertEquals(Status.Code.NOT_FOUND, code(() -> admin().deleteGroup(
                DeleteGroupRequest.newBuilder().setTopic("adm-e").setGroup("ghost").build())));
        assertEquals(Status.Code.INVALID_ARGUMENT, code(() -> admin().topicStats(TopicStatsRequest.newBuilder().setTopic("").build())));
        assertEquals(Status.Code.NOT_FOUND, code(() -> admin().transferLeader(TransferLeaderRequest.newBuilder().setId("n9").build())));
        String leader = cluster.awaitLeader().id();
        assertEquals(Status.Code.FAILED_PRECONDITION, code(() -> admin().removeNode(RemoveNodeRequest.newBuilder().setId(leader).build())));
        TestNode follower = cluster.followers().get(0);
        var existing = cluster.settingsOf(follower);
        assertEquals(Status.Code.ALREADY_EXISTS, code(() -> admin().addNode(AddNodeRequest.newBuilder().setId(follower.id())
                .setHost("127.0.0.1").setRaftPort(Integer.parseInt(existing.get("raft.port")))
                .setGrpcPort(Integer.parseInt(existing.get("grpc.port"))).build())));
        // Nothing listens there: the new node was not started. A retryable refusal, not an internal error.
        StatusRuntimeException notRunning = assertThrows(StatusRuntimeException.class, () -> admin().addNode(
                AddNodeRequest.newBuilder().setId("n9").setHost("127.0.0.1").setRaftPort(TestNode.freePort())
                        .setGrpcPort(TestNode.freePort()).build()));
        assertEquals(Status.Code.UNAVAILABLE, notRunning.getStatus().getCode(), notRunning::toString);
        assertTrue(notRunning.getStatus().getDescription().contains("start it with --join"), notRunning::toString);
    }

    @Test
    void membershipRefusalsAreTypedOnTheLeaderAndThroughAFollower() throws Exception {
        TestNode leader = cluster.awaitLeader();
        TestNode follower = cluster.followers().get(0);
        ManagedChannel direct = ManagedChannelBuilder.forTarget(leader.target()).usePlaintext().build();
        try {
            for (AdminGrpc.AdminBlockingStub stub : List.of(admin(),
                    AdminGrpc.newBlockingStub(direct).withDeadlineAfter(60, TimeUnit.SECONDS))) {
                String registered = leader.node().raft().grpcAddressOf(follower.id());
                var existing = cluster.settingsOf(follower);
                StatusRuntimeException twice = assertThrows(StatusRuntimeException.class, () -> stub.addNode(
                        AddNodeRequest.newBuilder().setId(follower.id()).setHost("127.0.0.1")
                                .setRaftPort(Integer.parseInt(existing.get("raft.port")))
                                .setGrpcPort(TestNode.freePort()).build()));
                assertEquals(Status.Code.ALREADY_EXISTS, twice.getStatus().getCode(), twice::toString);
                assertEquals(follower.id() + " is already a member of the cluster", twice.getStatus().getDescription());
                assertEquals(registered, leader.node().raft().grpcAddressOf(follower.id()),
                        "a refused add leaves the member's client address alone");

                StatusRuntimeException unknown = assertThrows(StatusRuntimeException.class,
                        () -> stub.removeNode(RemoveNodeRequest.newBuilder().setId("n9").build()));
                assertEquals(Status.Code.NOT_FOUND, unknown.getStatus().getCode(), unknown::toString);
                assertEquals("n9 is not a member of the cluster", unknown.getStatus().getDescription());

                StatusRuntimeException huge = assertThrows(StatusRuntimeException.class,
                        () -> stub.removeNode(RemoveNodeRequest.newBuilder().setId("n".repeat(100_000)).build()));
                assertEquals(Status.Code.NOT_FOUND, huge.getStatus().getCode(), huge::toString);
                assertTrue(huge.getStatus().getDescription().length() < 150, "quotes a short prefix of the id only: "
                        + huge.getStatus().getDescription());
            }
            assertEquals(3, leader.node().raft().admin().members().size(), "no refusal changed the configuration");
        } finally {
            direct.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void snapshotAndLeadershipTransfer() {
        var snap = admin().snapshot(SnapshotRequest.newBuilder().setNodeId(cluster.followers().get(1).id()).build());
        assertEquals(cluster.followers().get(1).id(), snap.getNodeId());
        TestNode target = cluster.followers().get(1);
        admin().transferLeader(TransferLeaderRequest.newBuilder().setId(target.id()).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> target.node().isLeader());
    }

    @Test
    void everyNodeReportsTheSameDigestAtTheSameAppliedIndex() {
        client.publishBatch(IntStream.range(0, 20).mapToObj(i -> Message.of("adm-digest", "m" + i)).toList());
        await("equal digests at an equal applied index").atMost(Duration.ofSeconds(30)).until(() -> {
            List<io.hourglass.api.v1.StateDigestResponse> digests = cluster.nodes().stream().map(n -> {
                ManagedChannel c = ManagedChannelBuilder.forTarget(n.target()).usePlaintext().build();
                try {
                    return AdminGrpc.newBlockingStub(c).withDeadlineAfter(10, TimeUnit.SECONDS)
                            .stateDigest(io.hourglass.api.v1.StateDigestRequest.getDefaultInstance());
                } finally {
                    c.shutdownNow();
                }
            }).toList();
            return digests.stream().map(d -> d.getAppliedIndex() + "/" + d.getSha256()).distinct().count() == 1;
        });
        var one = admin().stateDigest(io.hourglass.api.v1.StateDigestRequest.getDefaultInstance());
        assertEquals(64, one.getSha256().length());
        assertTrue(one.getAppliedIndex() > 0);
        assertTrue(one.getFamiliesMap().keySet().containsAll(List.of("events", "meta", "receipts", "dedup")),
                "a digest per column family: " + one.getFamiliesMap());
        assertTrue(one.getFamiliesMap().get("events").matches("[0-9a-f]{16}:[1-9][0-9]*"),
                "events holds the 20 messages (or what is left of them): " + one.getFamiliesMap());
    }
}
