package io.hourglass.server.rooms;

import static io.hourglass.api.v1.SubscriptionMode.SYNC;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lock-step round trip, measured (printed, never asserted): three auto-acking sync members in
 * one room with a backlog; one round is the time between two consecutive deliveries to the first
 * member — all three acks reach the leader, the gate opens, the release commits through Raft, and
 * the next message is fanned out. Prints {@code ROOM_ROUNDTRIP nodes=N p50_ms=.. p99_ms=..}.
 *
 * <p>Runs only with {@code -Dhourglass.measure=true}; {@code -Dhourglass.measure.rounds} (500).
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RoomRoundTripMeasurementTest {
    private static final int WARMUP = 50;
    private static final int ROUNDS = Integer.getInteger("hourglass.measure.rounds", 500);

    @BeforeAll
    static void onlyWhenMeasuring() {
        assumeTrue(Boolean.getBoolean("hourglass.measure"), "a measurement: run with -Dhourglass.measure=true");
    }

    @Test
    void oneNode(@TempDir Path dir) throws InterruptedException {
        try (TestNode node = TestNode.start(dir)) {
            measure(1, node.target());
        }
    }

    @Test
    void threeNodes(@TempDir Path dir) throws InterruptedException {
        try (TestCluster cluster = TestCluster.start(dir, 3, Map.of())) {
            measure(3, cluster.awaitLeader().target());
        }
    }

    private static void measure(int nodes, String target) throws InterruptedException {
        ManagedChannel channel = ManagedChannelBuilder.forTarget(target).usePlaintext().build();
        List<SessionClient> clients = new ArrayList<>();
        try {
            RoomsApi api = new RoomsApi(channel);
            String room = "roundtrip";
            int messages = WARMUP + ROUNDS + 1;
            // A holder keeps the gate shut while the backlog is built, so the rounds measure the gate, not the sends.
            SessionClient holder = SessionClient.open(channel, "holder", 0).join(room, SYNC);
            clients.add(holder);
            api.send(room, "hold");
            holder.awaitPayloads("hold");
            for (int i = 0; i < messages; i++) {
                api.send(room, "m" + i);
            }
            List<SessionClient> members = new ArrayList<>();
            for (int i = 1; i <= 3; i++) {
                SessionClient m = SessionClient.open(channel, "member" + i, 0).autoAck().join(room, SYNC);
                clients.add(m);
                members.add(m);
            }
            assertEquals("UNSUBSCRIBED", holder.unsubscribe(room).getOutcome());
            SessionClient first = members.get(0);
            await().atMost(Duration.ofMinutes(3))
                    .until(() -> first.received().size() >= messages);
            List<SessionClient.Received> got = first.received();
            long[] rounds = new long[ROUNDS];
            for (int i = 0; i < ROUNDS; i++) {
                rounds[i] = got.get(WARMUP + i + 1).atNanos() - got.get(WARMUP + i).atNanos();
            }
            Arrays.sort(rounds);
            System.out.printf(Locale.ROOT, "ROOM_ROUNDTRIP nodes=%d p50_ms=%.2f p99_ms=%.2f rounds=%d%n", nodes,
                    rounds[ROUNDS / 2] / 1e6, rounds[(int) Math.ceil(ROUNDS * 0.99) - 1] / 1e6, ROUNDS);
        } finally {
            clients.forEach(SessionClient::close);
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
