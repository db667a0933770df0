package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.AdminGrpc;
import io.hourglass.api.v1.ListConsumersRequest;
import io.hourglass.api.v1.ListConsumersResponse;
import io.hourglass.api.v1.NodeStatusRequest;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An admin call that needs the leader, made to a node that knows none, waits for one on a timer,
 * not on a call thread: with a call pool of two threads and six such calls waiting, the node still
 * answers its own status at once; after the election wait each of the six fails with UNAVAILABLE.
 */
@Timeout(180)
class AdminWithoutLeaderTest {
    private static final int WAITING_CALLS = 6;

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    @Test
    void callsWaitingForALeaderHoldNoCallThread() {
        TestCluster cluster = resources.start(dir, 3, Map.of("grpc.executorThreads", "2"));
        TestNode leader = cluster.awaitLeader();
        TestNode follower = cluster.followers().get(0);
        TestNode survivor = cluster.followers().get(1);
        ManagedChannel channel = ManagedChannelBuilder.forTarget(survivor.target()).usePlaintext().build();
        resources.own(() -> channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
        leader.stop();
        follower.stop();
        // A stopping leader hands over, possibly to the survivor, which then steps down for want of a majority.
        await("alone, the survivor knows no leader").atMost(Duration.ofSeconds(60))
                .until(() -> !survivor.node().raft().isLeader() && survivor.node().raft().leaderHint() == null);

        List<Status> failed = new CopyOnWriteArrayList<>();
        AdminGrpc.AdminStub async = AdminGrpc.newStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        for (int i = 0; i < WAITING_CALLS; i++) {
            async.listConsumers(ListConsumersRequest.getDefaultInstance(), new StreamObserver<>() {
                @Override
                public void onNext(ListConsumersResponse value) {
                }

                @Override
                public void onError(Throwable t) {
                    failed.add(Status.fromThrowable(t));
                }

                @Override
                public void onCompleted() {
                    failed.add(Status.OK);
                }
            });
        }
        var status = AdminGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                .nodeStatus(NodeStatusRequest.getDefaultInstance());
        assertEquals(0, failed.size(), "the node answered its status while every leader call still waited: " + failed);
        assertFalse(status.getId().isEmpty());

        await("each waiting call gives up after the election wait").atMost(Duration.ofSeconds(60))
                .until(() -> failed.size() == WAITING_CALLS);
        for (Status s : failed) {
            assertEquals(Status.Code.UNAVAILABLE, s.getCode(), s.toString());
            assertTrue(s.getDescription().contains("no leader right now"), s.toString());
        }
    }
}
