package io.hourglass.server.rooms;

import static io.hourglass.api.v1.SubscriptionMode.SYNC;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.hourglass.api.v1.EjectReason;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomDelivery;
import io.hourglass.api.v1.RoomMember;
import io.hourglass.api.v1.RoomMetricsRequest;
import io.hourglass.api.v1.RoomPeekRequest;
import io.hourglass.api.v1.RoomSendRequest;
import io.hourglass.api.v1.RoomState;
import io.hourglass.api.v1.RoomStateRequest;
import io.hourglass.api.v1.SessionOpen;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.server.grpc.StatusMapper;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ROOMS.md scenario 18 on a 3-node in-process cluster: the leader is stopped with a message in
 * flight, clients reconnect to the new leader and resubscribe saying which message they still hold
 * (as the client library does). An at-most-once room never delivers the in-flight message again and
 * releases the next one once its holders acked or were evicted; an at-least-once room redelivers it.
 * Followers refuse every rooms call with UNAVAILABLE and the leader's address. These raw streams send
 * no session id, so the new leader cannot tell when the holders are back and holds every room with
 * a message in flight for the whole failover hold; {@code RoomHoldersFailoverTest} covers clients
 * that send one.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class RoomFailoverTest {
    private static final Logger LOG = LoggerFactory.getLogger(RoomFailoverTest.class);
    private static final Duration NEW_LEADER_WITHIN = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    private static TestCluster cluster;
    private static ScheduledExecutorService pingers;
    private final List<ManagedChannel> channels = new ArrayList<>();
    private final List<SessionClient> clients = new ArrayList<>();
    /** The stop of the leader a test stopped, joined after the test. */
    private CompletableFuture<Void> stopping = CompletableFuture.completedFuture(null);

    @BeforeAll
    static void start() {
        // After a failover a room stays shut for min(clientTimeout, resubscribeGrace) while members come back.
        cluster = TestCluster.start(dir, 3, Map.of("rooms.clientTimeout", "3s", "rooms.resubscribeGrace", "3s"));
        pingers = Executors.newScheduledThreadPool(1, r -> {
            Thread t = new Thread(r, "test-pinger");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterAll
    static void stop() {
        pingers.shutdownNow();
        cluster.close();
    }

    /** Every test starts with all three nodes up (a previous test stopped a leader). */
    @BeforeEach
    void allNodesUp() {
        for (TestNode n : cluster.nodes()) {
            if (!n.isRunning()) {
                n.startAgain();
            }
        }
        cluster.awaitLeader();
    }

    @AfterEach
    void closeClients() throws InterruptedException {
        stopping.join();
        clients.forEach(SessionClient::close);
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private ManagedChannel channel(TestNode n) {
        ManagedChannel c = ManagedChannelBuilder.forTarget(n.target()).usePlaintext().build();
        channels.add(c);
        return c;
    }

    private SessionClient open(ManagedChannel channel, String name, long timeoutMs) {
        SessionClient c = SessionClient.open(channel, name, timeoutMs);
        clients.add(c);
        return c;
    }

    /**
     * Stops the leader in the background and returns its successor as soon as it leads. The stop
     * itself can take seconds (Ratis waits up to 3 s for a channel to a restarted peer to shut
     * down gracefully), while the new leader's failover hold runs from the moment it leads: clients
     * come back within that hold, not after the old process is gone.
     */
    private TestNode stopLeader(TestNode leader) {
        LOG.info("stopping the leader {}", leader.id());
        stopping = CompletableFuture.runAsync(leader::stop);
        TestNode next = cluster.awaitLeaderOtherThan(leader, NEW_LEADER_WITHIN);
        LOG.info("new leader {}", next.id());
        return next;
    }

    private static void assertSessionEndedByTheStop(SessionClient c) {
        Status s = c.awaitEnd();
        assertEquals(Status.Code.UNAVAILABLE, s.getCode(), () -> c.name + ": " + s);
    }

    @Test
    void atMostOnceTheNewLeaderNeverRedeliversAndTheHoldersAcksOrEvictionReleaseTheNext() {
        String room = "at-most-once";
        TestNode leader = cluster.awaitLeader();
        ManagedChannel toLeader = channel(leader);
        RoomsApi api = new RoomsApi(toLeader);
        SessionClient a = open(toLeader, "A", 0).join(room, SYNC);
        SessionClient b = open(toLeader, "B", 0).join(room, SYNC);
        SessionClient c = open(toLeader, "C", 0).join(room, SYNC);
        String m1 = api.send(room, "m1");
        api.send(room, "m2");
        for (SessionClient x : List.of(a, b, c)) {
            x.awaitPayloads("m1");
        }
        a.ackLast(); // A holds nothing; B and C still hold m1

        TestNode next = stopLeader(leader);
        List.of(a, b, c).forEach(RoomFailoverTest::assertSessionEndedByTheStop);
        ManagedChannel toNext = channel(next);
        RoomsApi api2 = new RoomsApi(toNext);
        long cTimeoutMs = 4_000;
        SessionClient b2 = open(toNext, "B2", 0);
        assertEquals("SUBSCRIBED", b2.subscribe(room, SYNC, m1).getOutcome());
        SessionClient c2 = open(toNext, "C2", cTimeoutMs); // never pings again: it will be evicted
        assertEquals("SUBSCRIBED", c2.subscribe(room, SYNC, m1).getOutcome());
        SessionClient a2 = open(toNext, "A2", 0).join(room, SYNC);
        for (SessionClient x : List.of(a2, b2)) {
            x.ping();
            x.startPinging(pingers, Duration.ofMillis(500)); // alive through the failover hold
        }
        RoomState s = api2.state(room);
        assertEquals(m1, s.getInFlight(), "the new leader keeps m1 in flight");
        assertEquals(1, s.getBacklog());
        assertEquals(List.of(a2.clientId()), s.getMembersList().stream().filter(RoomMember::getReady)
                .map(RoomMember::getClientId).toList(), "the holders of m1 gate the room");
        assertEquals(List.of(), a2.payloads(), "m1 is not delivered twice");
        assertEquals(List.of(), b2.payloads(), "m1 is not delivered twice");
        long cLastSeen = s.getMembersList().stream().filter(m -> m.getClientId().equals(c2.clientId()))
                .findFirst().orElseThrow().getLastSeenMs();

        assertEquals("ACKED", b2.ack(room, m1).getOutcome(), "a holder's ack of m1 counts on the new leader");
        RoomDelivery m2 = a2.awaitDelivery("m2");
        assertTrue(m2.getDeliveredAtMs() >= cLastSeen + cTimeoutMs,
                "m2 waited for C2, which held m1, to be evicted");
        b2.awaitPayloads("m2");
        assertEquals(EjectReason.TIMEOUT, c2.awaitEjected(room).getReason());
        assertEquals(List.of(), c2.payloads());
        assertFalse(m2.getRedelivered());
        assertEquals(List.of("m1"), a.payloads());
        assertEquals(List.of("m2"), a2.payloads());
    }

    /**
     * Found by the chaos run: every member had acked the last released message when the leader went,
     * so the new leader restores it as in flight with nobody holding it; the next send must flow
     * once the failover hold has passed.
     */
    @Test
    void atMostOnceARoomWhoseLastMessageWasAckedByAllFlowsAgainAfterAFailover() {
        String room = "acked-before-failover";
        TestNode leader = cluster.awaitLeader();
        ManagedChannel toLeader = channel(leader);
        RoomsApi api = new RoomsApi(toLeader);
        SessionClient a = open(toLeader, "A", 0).join(room, SYNC);
        SessionClient b = open(toLeader, "B", 0).join(room, SYNC);
        api.send(room, "m1");
        a.awaitPayloads("m1");
        b.awaitPayloads("m1");
        a.ackLast();
        b.ackLast();

        TestNode next = stopLeader(leader);
        List.of(a, b).forEach(RoomFailoverTest::assertSessionEndedByTheStop);
        ManagedChannel toNext = channel(next);
        SessionClient a2 = open(toNext, "A2", 0).join(room, SYNC);
        SessionClient b2 = open(toNext, "B2", 0).join(room, SYNC);
        for (SessionClient x : List.of(a2, b2)) {
            x.startPinging(pingers, Duration.ofMillis(500));
        }
        new RoomsApi(toNext).send(room, "m2");
        a2.awaitPayloads("m2");
        b2.awaitPayloads("m2");
        a2.ackLast();
        b2.ackLast();
        new RoomsApi(toNext).send(room, "m3");
        a2.awaitPayloads("m2", "m3");
    }

    @Test
    void atLeastOnceTheNewLeaderRedeliversTheMessageInFlight() {
        String room = "at-least-once";
        TestNode leader = cluster.awaitLeader();
        ManagedChannel toLeader = channel(leader);
        RoomsApi api = new RoomsApi(toLeader);
        api.configure(room, true, 0);
        SessionClient a = open(toLeader, "A", 0).join(room, SYNC);
        SessionClient b = open(toLeader, "B", 0).join(room, SYNC);
        String m1 = api.send(room, "m1");
        api.send(room, "m2");
        a.awaitPayloads("m1");
        b.awaitPayloads("m1");
        b.ackLast(); // A has not acked m1 when the leader goes

        TestNode next = stopLeader(leader);
        List.of(a, b).forEach(RoomFailoverTest::assertSessionEndedByTheStop);
        ManagedChannel toNext = channel(next);
        RoomsApi api2 = new RoomsApi(toNext);
        SessionClient a2 = open(toNext, "A2", 0);
        a2.startPinging(pingers, Duration.ofMillis(500)); // alive through the failover hold
        assertEquals("SUBSCRIBED", a2.subscribe(room, SYNC, m1).getOutcome());
        RoomDelivery again = a2.awaitDelivery("m1");
        assertEquals(m1, again.getMessageId(), "the same message, under the same id");
        assertTrue(again.getRedelivered());
        assertTrue(again.getAckable());
        SessionClient b2 = open(toNext, "B2", 0).join(room, SYNC);
        b2.startPinging(pingers, Duration.ofMillis(500));
        RoomState s = api2.state(room);
        assertTrue(s.getAtLeastOnce(), "the room's setting was replicated");
        assertEquals(m1, s.getInFlight());
        assertEquals(1, s.getBacklog());
        a2.ackLast();
        a2.awaitPayloads("m1", "m2");
        b2.awaitPayloads("m2");
    }

    @Test
    void followersRefuseSessionsWithTheLeadersAddressAndForwardEveryCall() {
        TestNode leader = cluster.awaitLeader();
        TestNode follower = cluster.followers().get(0);
        // Right after an election a follower may not have heard from the leader yet: then it names none.
        await("the follower knows the leader").atMost(Duration.ofSeconds(30))
                .until(() -> leader.target().equals(follower.node().raft().leaderHint()));
        ManagedChannel toFollower = channel(follower);
        SessionClient s = SessionClient.start(toFollower, "F");
        clients.add(s);
        s.send(SessionRequest.newBuilder().setOpen(SessionOpen.getDefaultInstance()));
        assertEquals(Status.Code.UNAVAILABLE, s.awaitEnd().getCode());
        assertEquals(leader.target(), s.trailers().get(StatusMapper.LEADER_KEY), "session open");

        RoomsApi api = new RoomsApi(toFollower);
        String room = "on-a-follower";
        Map<String, Supplier<?>> calls = Map.of(
                "send", () -> api.send(room, "x"),
                "sendOutOfBand", () -> api.sendOutOfBand(room, "x"),
                "peek", () -> api.stub().peek(RoomPeekRequest.newBuilder().setRoom(room).build()),
                "state", () -> api.stub().state(RoomStateRequest.newBuilder().setRoom(room).build()),
                "metrics", () -> api.stub().metrics(RoomMetricsRequest.newBuilder().setTopN(3).build()),
                "configure", () -> api.stub().configure(RoomConfigureRequest.newBuilder().setRoom(room)
                        .setAtLeastOnce(true).build()),
                "send with a producer", () -> api.stub().send(RoomSendRequest.newBuilder().setRoom(room)
                        .setClientId(UUID.randomUUID().toString()).setPayload(ByteString.copyFromUtf8("x")).build()));
        // Unary calls need no gate of this node's: the follower forwards them to the leader and answers.
        calls.forEach((name, call) -> assertNotNull(call.get(), name));
    }
}
