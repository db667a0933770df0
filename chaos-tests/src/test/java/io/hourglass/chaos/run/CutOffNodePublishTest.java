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
 * every node) publishes through another server within about a second: the follower's connection
 * to the leader hangs rather than breaks, but once it has heard from no leader for about 7/10 of
 * {@code raft.electionTimeoutMin} and reaches no majority of the voters, its {@code ContactGuard}
 * fails the waiting proposal with UNAVAILABLE, and the client moves on. Needs root and network namespaces; skipped otherwise.
 * Prints {@code CUT_OFF_PUBLISH_MS} (5.3 s before the guard: the request timeout).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CutOffNodePublishTest {
    /** About 0.8 s to notice, then one publish elsewhere; 3 s allows for a busy 2-core machine. */
    private static final Duration THROUGH_ANOTHER_SERVER_WITHIN = Duration.ofSeconds(3);
    /**
     * The followers agree the leader is silent after raft.electionTimeoutMin (1 s), the one whose log
     * ends last starts the election at once (LeaderExitWatch), then one commit: 0.94–1.05 s here,
     * 1.05 s in one CI run and 2.85 s in another (a busy 2-core machine, where the election can fall
     * back to Ratis' randomized timeout and pre-vote, which took 1.2–4.2 s before the watch). What
     * this guards is the forwarder: waiting out the request timeout took 5.1–5.4 s, so 4.5 s.
     */
    private static final Duration ELECTION_THEN_COMMIT_WITHIN = Duration.ofMillis(4500);

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
                assertTrue(ms < THROUGH_ANOTHER_SERVER_WITHIN.toMillis(), "the publish took " + ms + " ms");
                cluster.network().orElseThrow().healAll();
            }
        }
    }

    /**
     * The other side of the partition: the producer's first server is a follower and the leader is
     * cut off. The two followers elect a new leader once both have heard nothing from the old one for
     * {@code raft.electionTimeoutMin}. The follower's forwarded proposal goes out on a connection to
     * the old leader that hangs; each forwarded attempt gives up after {@code raft.electionTimeoutMin}
     * (not the 5 s request timeout) and goes again to the leader the majority elected meanwhile (the
     * retry cache and the producer-id dedup make the second attempt safe). Prints {@code LEADER_CUT_OFF_PUBLISH_MS}
     * (5.1–5.4 s before the short attempts: the request timeout).
     */
    @Test
    void aPublishThroughAFollowerCommitsOnTheNewLeaderSoonAfterTheLeaderIsCutOff() {
        try (ChaosCluster cluster = ChaosCluster.startInNamespaces(getClass(), 3)) {
            ServerProcess leader = cluster.awaitLeader(Duration.ofSeconds(30));
            ServerProcess follower = cluster.voters().stream().filter(n -> n != leader).findFirst().orElseThrow();
            try (HourglassClient client = HourglassClient.builder().servers(List.of(follower.ports().grpcAddress())).build()) {
                client.publish(Message.of("leader-cut-off", "before"));

                cluster.cutOff(List.of(cluster.slotOf(leader)));
                long start = System.nanoTime();
                client.publish(Message.of("leader-cut-off", "during"));
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                System.out.println("LEADER_CUT_OFF_PUBLISH_MS " + ms + " (leader " + leader.nodeId() + " cut off, through "
                        + follower.nodeId() + ")");
                assertTrue(ms < ELECTION_THEN_COMMIT_WITHIN.toMillis(), "the publish took " + ms + " ms");
                cluster.network().orElseThrow().healAll();
            }
        }
    }
}
