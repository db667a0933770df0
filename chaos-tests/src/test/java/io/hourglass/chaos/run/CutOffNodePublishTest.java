package io.hourglass.chaos.run;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.chaos.ServerProcess;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A producer whose first server is a follower cut off from the others (the producer still reaches
 * every node) still publishes while the partition holds: the follower's forwarded proposal fails
 * after {@code raft.requestTimeout} (its connection to the leader hangs rather than breaks), it
 * answers UNAVAILABLE, and the client publishes through another server. Needs root and network
 * namespaces; skipped otherwise. Prints {@code CUT_OFF_PUBLISH_MS} (measured 5.3 s: the request
 * timeout; a shorter per-attempt timeout for forwarded proposals would cut it).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CutOffNodePublishTest {
    /** Longer than the partition could need: the publish must succeed while it still holds. */
    private static final Duration PARTITION = Duration.ofSeconds(30);

    @Test
    void aPublishThroughACutOffFollowerSucceedsThroughAnotherServerWhileThePartitionHolds() {
        try (ChaosCluster cluster = ChaosCluster.startInNamespaces(getClass(), 3)) {
            ServerProcess leader = cluster.awaitLeader(Duration.ofSeconds(30));
            ServerProcess follower = cluster.voters().stream().filter(n -> n != leader).findFirst().orElseThrow();
            List<String> servers = new ArrayList<>(List.of(follower.ports().grpcAddress()));
            cluster.voters().stream().filter(n -> n != follower).forEach(n -> servers.add(n.ports().grpcAddress()));
            try (HourglassClient client = HourglassClient.builder().servers(servers).build()) {
                client.publish(Message.of("cut-off", "before")); // through the follower, while it is connected

                cluster.cutOff(List.of(cluster.slotOf(follower)));
                long start = System.nanoTime();
                client.publish(Message.of("cut-off", "during"));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                System.out.println("CUT_OFF_PUBLISH_MS " + ms + " (first server " + follower.nodeId() + " cut off)");
                assertTrue(ms < PARTITION.toMillis(), "the publish took " + ms + " ms, longer than the partition may last");
                cluster.network().orElseThrow().healAll();
            }
        }
    }
}
