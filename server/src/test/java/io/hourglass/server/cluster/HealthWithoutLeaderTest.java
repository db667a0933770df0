package io.hourglass.server.cluster;

import static io.hourglass.server.testing.StandardServices.health;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.raft.Readiness;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * gRPC health follows readiness on a node of a three-node cluster: with the other two stopped it
 * knows no leader, and says NOT_SERVING for the server and its services (as {@code /readyz} says
 * 503); once one of them is back and a leader is elected, SERVING again.
 */
@Timeout(180)
class HealthWithoutLeaderTest {
    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    @Test
    void aNodeThatKnowsNoLeaderIsNotServingUntilAQuorumIsBack() {
        TestCluster cluster = resources.start(dir, 3, Map.of());
        TestNode leader = cluster.awaitLeader();
        TestNode follower = cluster.followers().get(0);
        TestNode survivor = cluster.followers().get(1);
        ManagedChannel channel = ManagedChannelBuilder.forTarget(survivor.target()).usePlaintext().build();
        resources.own(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        awaitHealth(channel, ServingStatus.SERVING, "the cluster is up");

        leader.stop();
        follower.stop();
        awaitHealth(channel, ServingStatus.NOT_SERVING, "alone, it knows no leader");
        Readiness readiness = survivor.node().readiness(); // what /readyz answers: every group
        assertFalse(readiness.ready(), "and /readyz agrees: " + readiness.detail());

        follower.startAgain();
        cluster.awaitLeader();
        awaitHealth(channel, ServingStatus.SERVING, "a majority is back");
    }

    private static void awaitHealth(ManagedChannel channel, ServingStatus expected, String why) {
        await(expected + ": " + why).atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            for (String service : List.of("", BrokerGrpc.SERVICE_NAME)) {
                assertEquals(expected, health(channel, service), "service '" + service + "'");
            }
        });
    }
}
