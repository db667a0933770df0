package io.hourglass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomSendRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoomClientTest {
    private FakeRooms server;
    private HourglassClient client;
    private RoomClient rooms;

    @BeforeEach
    void start() throws Exception {
        server = new FakeRooms();
        client = client(server.address());
        rooms = client.rooms();
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    private static HourglassClient client(String... servers) {
        return HourglassClient.builder().servers(servers).channelFactory(FakeRooms.channels())
                .retryPolicy(new RetryPolicy(Duration.ofMillis(5), Duration.ofMillis(20), Duration.ofSeconds(5)))
                .build();
    }

    /** Scenario 17: A holds m1; m2 (priority 3) and m3 (priority 1) pending. */
    @Test
    void peekAndStateShowThePendingMessagesInReleaseOrder() throws Exception {
        BlockingQueue<ReceivedRoomMessage> received = new LinkedBlockingQueue<>();
        RoomSession a = rooms.openSession(RoomSessionOptions.of(received::add));
        a.subscribe("r", RoomMode.SYNC).get(10, TimeUnit.SECONDS);
        String m1 = rooms.send("r", "m1", 0);
        assertEquals(m1, received.poll(10, TimeUnit.SECONDS).messageId());
        String m2 = rooms.send("r", "m2", 3);
        String m3 = rooms.send("r", "m3".getBytes(), 1);

        List<QueuedRoomMessage> all = rooms.peek("r", 0, 10);
        assertEquals(List.of(m3, m2), all.stream().map(QueuedRoomMessage::messageId).toList());
        assertEquals("m3", all.get(0).payloadUtf8());
        assertEquals(1, all.get(0).priority());
        assertTrue(all.get(0).sentAtMs() > FakeRooms.NOW);
        assertEquals(List.of(m2), rooms.peek("r", 1, 1).stream().map(QueuedRoomMessage::messageId).toList());
        assertEquals(List.of(), rooms.peek("r", 5, 10));

        RoomStatus state = rooms.state("r");
        assertEquals("r", state.room());
        assertEquals(2, state.backlog());
        assertEquals(List.of(new RoomStatus.Member(a.clientId(), FakeRooms.NOW, false)), state.members());
        assertEquals(m1, state.inFlight());
        assertEquals(0, state.listeners());
        assertEquals(Duration.ZERO, state.ackTimeout());
        assertFalse(state.recovering());
    }

    @Test
    void metricsListTheLargestBacklogs() throws Exception {
        RoomSession a = rooms.openSession(RoomSessionOptions.of(m -> { }));
        for (String room : List.of("x", "y", "z")) {
            a.subscribe(room, RoomMode.SYNC).get(10, TimeUnit.SECONDS);
        }
        for (int i = 0; i < 3; i++) {
            rooms.send("x", "p", 0);
        }
        rooms.send("y", "p", 0);
        for (int i = 0; i < 4; i++) {
            rooms.send("z", "p", 0);
        }

        RoomMetrics metrics = rooms.metrics(2);

        assertEquals(2, metrics.roomsWithBacklog()); // y's only message is in flight
        assertEquals(List.of(new RoomMetrics.Backlog("z", 3), new RoomMetrics.Backlog("x", 2)), metrics.top());
        assertThrows(IllegalArgumentException.class, () -> rooms.metrics(0));
    }

    @Test
    void outOfBandReachesEverySubscriberWithoutAnAckHandle() throws Exception {
        BlockingQueue<ReceivedRoomMessage> received = new LinkedBlockingQueue<>();
        RoomSession a = rooms.openSession(RoomSessionOptions.of(received::add));
        a.subscribe("r", RoomMode.SYNC).get(10, TimeUnit.SECONDS);

        OutOfBandResult result = rooms.sendOutOfBand("r", "urgent");

        assertEquals(1, result.recipients());
        ReceivedRoomMessage m = received.poll(10, TimeUnit.SECONDS);
        assertEquals(result.messageId(), m.messageId());
        assertTrue(m.oob());
        assertFalse(m.ackable());
        assertEquals(0, rooms.sendOutOfBand("empty", "x".getBytes()).recipients());
    }

    @Test
    void configureSendsTheGuaranteeAndAckTimeout() {
        rooms.configure("r", true, Duration.ofSeconds(5));
        rooms.configure("s", false, null);

        assertEquals(RoomConfigureRequest.newBuilder().setRoom("r").setAtLeastOnce(true).setAckTimeoutMs(5_000).build(),
                server.unaryRequests.get(0));
        assertEquals(RoomConfigureRequest.newBuilder().setRoom("s").build(), server.unaryRequests.get(1));
        assertThrows(IllegalArgumentException.class, () -> rooms.configure("r", false, Duration.ofSeconds(-1)));
    }

    @Test
    void retriesUnavailableThenSucceeds() {
        server.unaryFailures.add(Status.UNAVAILABLE.withDescription("no leader yet"));
        server.unaryFailures.add(Status.UNAVAILABLE.withDescription("not the leader"));

        String id = rooms.send("r", "x", 0);

        assertEquals("m-1", id);
        assertEquals(3, server.unaryRequests.size());
        RoomSendRequest first = (RoomSendRequest) server.unaryRequests.get(0);
        assertFalse(first.getProducerId().isEmpty(), "every send carries an idempotency key");
        assertEquals(RoomSendRequest.newBuilder().setRoom("r").setPayload(com.google.protobuf.ByteString.copyFromUtf8("x"))
                .setProducerId(first.getProducerId()).build(), server.unaryRequests.get(2), "retries keep the key");
    }

    @Test
    void followsTheLeaderHintOfAFollower() throws Exception {
        try (FakeRooms follower = new FakeRooms()) {
            follower.followerOf = server.address();
            try (HourglassClient viaFollower = client(follower.address())) {
                assertEquals("m-1", viaFollower.rooms().send("r", "x", 0));
                assertEquals(0, viaFollower.rooms().state("r").backlog());

                assertEquals(1, follower.unaryRequests.size(), "the second call went straight to the leader");
                assertEquals(2, server.unaryRequests.size());
            }
        }
    }

    @Test
    void neverRetriesAnInvalidRequest() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> rooms.send("bad", "x", 0));

        assertEquals("room 'bad' is not allowed", e.serverMessage());
        assertEquals(1, server.unaryRequests.size());
        assertThrows(IllegalArgumentException.class, () -> rooms.send(" ", "x", 0));
        assertThrows(IllegalArgumentException.class, () -> rooms.peek("r", -1, 10));
        assertThrows(IllegalArgumentException.class, () -> rooms.peek("r", 0, 0));
    }

    @Test
    void givesUpAfterTheRetryDeadline() {
        try (HourglassClient lonely = HourglassClient.builder().servers("nobody-here:1")
                .channelFactory(FakeRooms.channels()).retryDeadline(Duration.ofMillis(300)).build()) {
            long start = System.nanoTime();

            UnavailableException e = assertThrows(UnavailableException.class, () -> lonely.rooms().state("r"));

            assertTrue(e.getMessage().startsWith("state of room 'r': no server available"), e.getMessage());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
        }
    }

    @Test
    void aClosedClientRefusesRoomCalls() {
        client.close();

        assertInstanceOf(HourglassClientException.class,
                assertThrows(HourglassClientException.class, () -> rooms.send("r", "x", 0)));
        assertThrows(HourglassClientException.class, () -> rooms.openSession(RoomSessionOptions.of(m -> { })));
    }
}
