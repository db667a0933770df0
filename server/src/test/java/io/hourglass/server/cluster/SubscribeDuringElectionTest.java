package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.SubscribeInit;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.api.v1.SubscribeResponse;
import io.hourglass.server.testing.StreamRecorder;
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
 * A Subscribe that reaches a node while no leader is known waits up to raft.leaderExitStagger for an
 * election's outcome instead of being refused at once (a refusal without a leader to name sends the
 * client around the other servers, which cost ~270 ms after a kill -9 of the leader). With two of
 * three nodes down the survivor knows no leader: its answer comes only after the wait, and is the
 * same UNAVAILABLE as before; when a node comes back during the wait, the stream ends with an answer
 * that names the leader (or is subscribed, if the survivor leads) instead.
 */
@Timeout(180)
class SubscribeDuringElectionTest {
    private static final Duration WAIT = Duration.ofSeconds(4);

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    @Test
    void aSubscribeToANodeThatKnowsNoLeaderWaitsForTheElection() {
        TestCluster cluster = resources.start(dir, 3, Map.of("raft.leaderExitStagger", WAIT.toMillis() + "ms"));
        TestNode leader = cluster.awaitLeader();
        List<TestNode> followers = cluster.followers();
        TestNode survivor = followers.get(0);
        leader.stop();
        followers.get(1).stop();
        await("the survivor names no leader").atMost(Duration.ofSeconds(30))
                .until(() -> survivor.node().raft().leaderHint() == null);
        ManagedChannel channel = ManagedChannelBuilder.forTarget(survivor.target()).usePlaintext().build();
        try {
            // Nobody comes back: the same refusal as before, after the wait.
            long start = System.nanoTime();
            StreamRecorder<SubscribeResponse> alone = subscribe(channel, "alone");
            Status refused = Status.fromThrowable(alone.awaitError());
            long waitedMs = TimeUnit.NANOSECONDS.toMillis(alone.endedAtNanos() - start);
            assertEquals(Status.Code.UNAVAILABLE, refused.getCode(), refused.toString());
            assertTrue(waitedMs >= WAIT.toMillis() - 200, "refused after " + waitedMs + " ms, before the wait ended");

            // A node comes back while a Subscribe waits: it is answered once a leader is elected.
            StreamRecorder<SubscribeResponse> waiting = subscribe(channel, "waiting");
            followers.get(1).startAgain();
            await("an answer").atMost(Duration.ofSeconds(60))
                    .until(() -> waiting.ended() || !waiting.values().isEmpty());
            if (waiting.values().isEmpty()) {
                Status answer = Status.fromThrowable(waiting.error());
                io.grpc.Metadata trailers = Status.trailersFromThrowable(waiting.error());
                String hint = trailers == null ? null : trailers.get(io.hourglass.server.grpc.StatusMapper.LEADER_KEY);
                assertFalse(hint == null || hint.isEmpty(), "the answer names the new leader: " + answer);
                assertNotEquals(survivor.target(), hint);
            } else {
                assertTrue(waiting.values().get(0).hasSubscribed(), waiting.values().toString());
                assertTrue(survivor.leads(), "subscribed on the survivor, which leads");
            }
        } finally {
            channel.shutdownNow();
        }
    }

    private static StreamRecorder<SubscribeResponse> subscribe(ManagedChannel channel, String topic) {
        StreamRecorder<SubscribeResponse> recorder = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> requests = BrokerGrpc.newStub(channel).subscribe(recorder);
        requests.onNext(SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic(topic).setGroup("g")).build());
        return recorder;
    }
}
