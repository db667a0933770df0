package io.hourglass.server.cluster;

import static io.hourglass.server.cluster.ShardedClusterTest.awaitBalanced;
import static io.hourglass.server.cluster.ShardedClusterTest.awaitEveryShardLed;
import static io.hourglass.server.cluster.ShardedClusterTest.http;
import static io.hourglass.server.cluster.ShardedClusterTest.leaderOf;
import static io.hourglass.server.cluster.ShardedClusterTest.leadershipsPerNode;
import static io.hourglass.server.cluster.ShardedClusterTest.oneNamePerShard;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.RoomSubscribe;
import io.hourglass.api.v1.RoomsGrpc;
import io.hourglass.api.v1.SessionOpen;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionResponse;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.ReceivedRoomMessage;
import io.hourglass.client.RoomMode;
import io.hourglass.client.RoomReply;
import io.hourglass.client.RoomSession;
import io.hourglass.client.RoomSessionOptions;
import io.hourglass.client.RoomStatus;
import io.hourglass.client.ShardHash;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rooms on a cluster of six event shards: each room lives in its name's shard, whose leader runs
 * its gate. A session with rooms on every shard keeps a stream per shard (each to that shard's
 * leader) and runs lock-step in all of them; unary calls to a node that does not lead the room's
 * shard are forwarded; lists and metrics merge every shard's; closing a node that leads several
 * shards moves those rooms to their new leaders and the session follows them.
 */
@Timeout(300)
class ShardedRoomsTest {
    private static final int SHARDS = 6;

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    /** What one session received, by room, in order. */
    private static final class Member {
        final Map<String, List<String>> received = new ConcurrentHashMap<>();
        RoomSession session;

        void open(HourglassClient client, List<String> rooms) {
            session = client.rooms().openSession(RoomSessionOptions.of(m -> {
                received.computeIfAbsent(m.room(), r -> new CopyOnWriteArrayList<>()).add(m.payloadUtf8());
                session.ack(m);
            }).withBackoff(Duration.ofMillis(50), Duration.ofMillis(500)));
            for (String room : rooms) {
                assertEquals(RoomReply.SUBSCRIBED, session.subscribe(room, RoomMode.SYNC).join().outcome(), room);
            }
        }

        List<String> of(String room) {
            return received.getOrDefault(room, List.of());
        }
    }

    private static long metric(TestNode n, String name) throws Exception {
        Matcher m = Pattern.compile("(?m)^" + name + "(\\{[^}]*})? ([0-9.eE+]+)$").matcher(http(n, "/metrics"));
        long sum = 0;
        while (m.find()) {
            sum += (long) Double.parseDouble(m.group(2));
        }
        return sum;
    }

    @Test
    void roomsOnEveryShardRunLockStepThroughAnyNodeAndFollowTheirShardAfterAFailover() throws Exception {
        TestCluster cluster = resources.start(dir, 3, Map.of("cluster.shards", Integer.toString(SHARDS),
                "raft.handOverTimeout", "0ms"));
        awaitEveryShardLed(cluster);
        // Rooms are at-most-once by default: a leadership handed over between a release's commit and its
        // delivery drops that message (ROOMS.md), so nothing is sent while the balancer still moves.
        awaitBalanced(cluster);
        List<String> rooms = oneNamePerShard("room-");
        HourglassClient members = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        Member a = new Member();
        Member b = new Member();
        a.open(members, rooms);
        b.open(members, rooms);
        assertEquals(rooms.size(), a.session.subscriptions().size());
        // Two sessions, a stream per shard each, spread over the shards' leaders.
        await("a stream per shard and session").atMost(Duration.ofSeconds(30)).until(() -> {
            long open = 0;
            for (TestNode n : cluster.running()) {
                open += metric(n, "hourglass_room_sessions");
            }
            return open == 2L * SHARDS;
        });

        // A sender that knows one node only: every room on a shard led elsewhere is forwarded.
        TestNode only = cluster.node(1);
        HourglassClient sender = resources.own(HourglassClient.builder().servers(List.of(only.target())).build());
        for (int i = 0; i < 3; i++) {
            for (String room : rooms) {
                sender.rooms().send(room, room + "#" + i, 0);
            }
        }
        List<String> expected = List.of("#0", "#1", "#2");
        await("both members got every room's messages in order").atMost(Duration.ofSeconds(60))
                .conditionEvaluationListener(c -> {
                    if (!c.isSatisfied() && c.getRemainingTimeInMS() <= c.getPollInterval().toMillis()) {
                        System.out.println("ROOMS_RECEIVED a=" + a.received + " b=" + b.received);
                    }
                })
                .until(() -> rooms.stream().allMatch(r -> a.of(r).size() == 3 && b.of(r).size() == 3));
        for (String room : rooms) {
            assertEquals(expected.stream().map(s -> room + s).toList(), a.of(room), room);
            assertEquals(expected.stream().map(s -> room + s).toList(), b.of(room), room);
        }
        assertTrue(metric(only, "hourglass_room_calls_forwarded_total") > 0,
                "sends for shards led elsewhere were forwarded");

        // Lists and metrics merge every shard's rooms, from any node.
        List<RoomStatus> listed = sender.rooms().list(0, 100);
        assertEquals(rooms.stream().sorted().toList(),
                listed.stream().map(RoomStatus::room).filter(rooms::contains).toList(), "every shard's rooms, by name");
        assertEquals(2, listed.stream().filter(r -> r.room().equals(rooms.get(4))).findFirst().orElseThrow()
                .members().size(), "the room's members as its shard's leader knows them");
        assertEquals(0, sender.rooms().metrics(10).roomsWithBacklog(), "nothing waits");

        // The node leading the most shards goes away without handing over: those shards elect, and the
        // session's streams for them follow to the new leaders (each on its own).
        Map<String, Integer> led = leadershipsPerNode(cluster);
        String victimId = led.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
        TestNode victim = cluster.running().stream().filter(n -> n.id().equals(victimId)).findFirst().orElseThrow();
        List<String> movedRooms = rooms.stream()
                .filter(r -> victim.node().raftHost().shard(ShardHash.shardOf(r, SHARDS)).isLeader()).toList();
        assertTrue(movedRooms.size() >= 2, "the victim leads several rooms' shards: " + led);
        victim.stop();
        awaitEveryShardLed(cluster);
        HourglassClient after = resources.own(HourglassClient.builder().servers(cluster.running().stream()
                .map(TestNode::target).toList()).build());
        for (String room : rooms) {
            after.rooms().send(room, room + "#3", 0);
        }
        await("both members got the message sent after the failover, in every room").atMost(Duration.ofSeconds(90))
                .until(() -> rooms.stream().allMatch(r -> a.of(r).contains(r + "#3") && b.of(r).contains(r + "#3")));
        assertTrue(!a.session.terminated().isDone(), "the session lives on");
        for (String room : movedRooms) {
            assertTrue(leaderOf(cluster, ShardHash.shardOf(room, SHARDS)).isPresent());
        }
    }

    @Test
    void aStreamServesTheRoomsOfItsOwnShardOnly() throws Exception {
        TestCluster cluster = resources.start(dir, 3, Map.of("cluster.shards", Integer.toString(SHARDS)));
        awaitBalanced(cluster); // shard 0's leader stays where the stream goes
        List<String> rooms = oneNamePerShard("room-");
        TestNode leader0 = leaderOf(cluster, 0).orElseThrow();
        ManagedChannel channel = ManagedChannelBuilder.forTarget(leader0.target()).usePlaintext().build();
        resources.own(channel::shutdownNow);
        BlockingQueue<SessionResponse> frames = new LinkedBlockingQueue<>();
        BlockingQueue<Throwable> ends = new LinkedBlockingQueue<>();
        StreamObserver<SessionResponse> sink = new StreamObserver<>() {
            @Override
            public void onNext(SessionResponse value) {
                frames.add(value);
            }

            @Override
            public void onError(Throwable t) {
                ends.add(t);
            }

            @Override
            public void onCompleted() {
                ends.add(new IllegalStateException("completed"));
            }
        };
        StreamObserver<SessionRequest> stream = RoomsGrpc.newStub(channel).session(sink);
        stream.onNext(SessionRequest.newBuilder().setOpen(SessionOpen.newBuilder().setShard(0)).build());
        SessionResponse opened = frames.poll(30, TimeUnit.SECONDS);
        assertTrue(opened != null && opened.hasOpened(), "opened: " + opened);
        assertEquals(SHARDS, opened.getOpened().getShards(), "the opened frame tells the shard count");

        stream.onNext(SessionRequest.newBuilder().setRequestId(1)
                .setSubscribe(RoomSubscribe.newBuilder().setRoom(rooms.get(1))).build());
        SessionResponse refused = frames.poll(30, TimeUnit.SECONDS);
        assertTrue(refused != null && refused.hasReply(), "reply: " + refused);
        assertEquals(RoomReply.INVALID_ARGUMENT, refused.getReply().getOutcome());
        assertTrue(refused.getReply().getError().contains("is on shard 1 of 6"), refused.getReply().getError());
        stream.onNext(SessionRequest.newBuilder().setRequestId(2)
                .setSubscribe(RoomSubscribe.newBuilder().setRoom(rooms.get(0))).build());
        SessionResponse subscribed = frames.poll(30, TimeUnit.SECONDS);
        assertEquals(RoomReply.SUBSCRIBED, subscribed.getReply().getOutcome(), "its own shard's room: " + subscribed);
        stream.onCompleted();

        StreamObserver<SessionRequest> wrong = RoomsGrpc.newStub(channel).session(sink);
        wrong.onNext(SessionRequest.newBuilder().setOpen(SessionOpen.newBuilder().setShard(SHARDS)).build());
        Throwable end = ends.poll(30, TimeUnit.SECONDS);
        while (end instanceof IllegalStateException) { // the first stream's orderly end
            end = ends.poll(30, TimeUnit.SECONDS);
        }
        assertEquals(Status.Code.INVALID_ARGUMENT, ((StatusRuntimeException) end).getStatus().getCode());
        assertTrue(end.getMessage().contains("shard must be between 0 and 5"), end.getMessage());
    }
}
