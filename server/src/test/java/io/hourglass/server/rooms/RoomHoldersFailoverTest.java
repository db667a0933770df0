package io.hourglass.server.rooms;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.ReceivedRoomMessage;
import io.hourglass.client.RoomHandler;
import io.hourglass.client.RoomMode;
import io.hourglass.client.RoomReply;
import io.hourglass.client.RoomSession;
import io.hourglass.client.RoomSessionOptions;
import io.hourglass.client.RoomStatus;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Issue 13, item 4, on a 3-node in-process cluster with the real client library: the leader is
 * stopped while both members of a room hold m1; their {@link RoomSession}s reconnect to the new
 * leader, resubscribe saying they hold m1 under their session ids, and ack it. The release entry of m1
 * recorded those session ids, so the new leader ends its failover hold as soon as both are back, and
 * m2 arrives well before the client timeout (20 s here) — which is how long the room stayed shut
 * before, when the new leader could not know who still held m1.
 *
 * <p>Its own cluster, since the hold under test is as long as the server's {@code rooms.clientTimeout}
 * and {@code RoomFailoverTest}'s cluster keeps it short to evict quickly.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RoomHoldersFailoverTest {
    private static final Logger LOG = LoggerFactory.getLogger(RoomHoldersFailoverTest.class);
    private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration NEW_LEADER_WITHIN = Duration.ofSeconds(30);

    @TempDir
    static Path dir;
    private static TestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = TestCluster.start(dir, 3, Map.of("rooms.clientTimeout", CLIENT_TIMEOUT.toSeconds() + "s",
                "rooms.resubscribeGrace", CLIENT_TIMEOUT.toSeconds() + "s"));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    /** A member that records what it receives, when (System.nanoTime), and acks only when told to. */
    private static final class Member implements RoomHandler {
        final List<ReceivedRoomMessage> received = new CopyOnWriteArrayList<>();
        final Map<String, Long> receivedAtNanos = new ConcurrentHashMap<>();

        @Override
        public void onMessage(ReceivedRoomMessage message) {
            receivedAtNanos.putIfAbsent(message.payloadUtf8(), System.nanoTime());
            received.add(message);
        }

        List<String> payloads() {
            return received.stream().map(ReceivedRoomMessage::payloadUtf8).toList();
        }
    }

    private static RoomReply reply(CompletableFuture<RoomReply> f) throws Exception {
        return f.get(CLIENT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    }

    private static long msSince(long startNanos, long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos - startNanos);
    }

    @Test
    void m2ArrivesWellBeforeTheClientTimeoutOnceBothHoldersAreBackAndHaveAcked() throws Exception {
        String room = "holders";
        TestNode leader = cluster.awaitLeader();
        Member a = new Member();
        Member b = new Member();
        try (HourglassClient client = HourglassClient.builder().servers(cluster.targetList()).build()) {
            RoomSession sa = client.rooms().openSession(RoomSessionOptions.of(a)
                    .withBackoff(Duration.ofMillis(50), Duration.ofMillis(500)));
            RoomSession sb = client.rooms().openSession(RoomSessionOptions.of(b)
                    .withBackoff(Duration.ofMillis(50), Duration.ofMillis(500)));
            assertEquals(RoomReply.SUBSCRIBED, reply(sa.subscribe(room, RoomMode.SYNC)).outcome());
            assertEquals(RoomReply.SUBSCRIBED, reply(sb.subscribe(room, RoomMode.SYNC)).outcome());
            String m1 = client.rooms().send(room, "m1", 0);
            client.rooms().send(room, "m2", 0);
            await("both hold m1").atMost(Duration.ofSeconds(10))
                    .until(() -> a.payloads().equals(List.of("m1")) && b.payloads().equals(List.of("m1")));
            String oldA = sa.clientId();
            String oldB = sb.clientId();

            long stoppedAt = System.nanoTime();
            LOG.info("stopping the leader {} with m1 in flight, held by {} and {}", leader.id(), oldA, oldB);
            leader.stop();
            TestNode next = cluster.awaitLeaderOtherThan(leader, NEW_LEADER_WITHIN);
            long electedAt = System.nanoTime();
            await("both sessions reopened on the new leader").atMost(CLIENT_TIMEOUT)
                    .until(() -> sa.isOpen() && sb.isOpen() && !sa.clientId().equals(oldA)
                            && !sb.clientId().equals(oldB));
            long backAt = System.nanoTime();
            assertEquals(RoomReply.ACKED, reply(sa.ack(room, m1)).outcome(), "A resubscribed holding m1");
            assertEquals(List.of("m1"), b.payloads(), "B still holds m1: nothing is released yet");
            assertEquals(RoomReply.ACKED, reply(sb.ack(room, m1)).outcome(), "B resubscribed holding m1");
            long ackedAt = System.nanoTime();

            await("m2 at both").atMost(CLIENT_TIMEOUT)
                    .until(() -> a.payloads().contains("m2") && b.payloads().contains("m2"));
            long m2At = Math.max(a.receivedAtNanos.get("m2"), b.receivedAtNanos.get("m2"));
            LOG.info("after the stop: new leader {} in {} ms, both sessions back in {} ms, both acked in {} ms, "
                            + "m2 at both in {} ms (client timeout {} ms)", next.id(), msSince(stoppedAt, electedAt),
                    msSince(stoppedAt, backAt), msSince(stoppedAt, ackedAt), msSince(stoppedAt, m2At),
                    CLIENT_TIMEOUT.toMillis());
            assertTrue(msSince(stoppedAt, m2At) < CLIENT_TIMEOUT.toMillis() / 2, () -> "m2 arrived "
                    + msSince(stoppedAt, m2At) + " ms after the leader was stopped; the client timeout is "
                    + CLIENT_TIMEOUT.toMillis() + " ms");

            assertEquals(List.of("m1", "m2"), a.payloads(), "m1 is not delivered twice");
            assertEquals(List.of("m1", "m2"), b.payloads());
            assertFalse(a.received.get(1).redelivered());
            assertEquals(36, sa.sessionId().length());
            assertNotEquals(sa.sessionId(), sb.sessionId());
            RoomStatus state = client.rooms().state(room);
            assertFalse(state.recovering(), "the hold is over");
            assertEquals(a.received.get(1).messageId(), state.inFlight());
            assertEquals(List.of(sa.clientId(), sb.clientId()).stream().sorted().toList(),
                    state.members().stream().map(RoomStatus.Member::clientId).sorted().toList());
            sa.close();
            sb.close();
        }
    }
}
