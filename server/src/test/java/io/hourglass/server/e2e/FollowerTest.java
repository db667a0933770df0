package io.hourglass.server.e2e;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.SubscribeInit;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.api.v1.SubscribeResponse;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.Subscription;
import io.hourglass.server.grpc.StatusMapper;
import io.hourglass.server.testing.StreamRecorder;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Any node serves: a follower forwards publishes and sends subscribers to the leader. */
@Timeout(180)
class FollowerTest {
    @TempDir
    static Path dir;
    private static TestCluster cluster;

    @BeforeAll
    static void start() {
        cluster = TestCluster.start(dir, 3, Map.of());
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void aFollowerRefusesASubscriptionNamingTheLeader() throws InterruptedException {
        TestNode leader = cluster.awaitLeader();
        TestNode follower = cluster.followers().get(0);
        ManagedChannel channel = ManagedChannelBuilder.forTarget(follower.target()).usePlaintext().build();
        try {
            // A follower names only a leader it heard from lately (3/4 of the election timeout; heartbeats
            // come every half of it): on a busy machine one late heartbeat may leave an answer without it.
            Throwable[] error = new Throwable[1];
            org.awaitility.Awaitility.await("a refusal naming the leader").atMost(java.time.Duration.ofSeconds(20))
                    .until(() -> {
                        StreamRecorder<SubscribeResponse> out = new StreamRecorder<>();
                        BrokerGrpc.newStub(channel).subscribe(out).onNext(SubscribeRequest.newBuilder()
                                .setInit(SubscribeInit.newBuilder().setTopic("t").setGroup("g")).build());
                        error[0] = out.awaitError();
                        assertEquals(Status.Code.UNAVAILABLE, Status.fromThrowable(error[0]).getCode());
                        return leader.target().equals(Status.trailersFromThrowable(error[0]).get(StatusMapper.LEADER_KEY));
                    });
            assertTrue(Status.fromThrowable(error[0]).getDescription().contains("not the leader"));
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aClientThatOnlyKnowsAFollowerPublishesAndConsumesThroughTheLeader() {
        TestNode follower = cluster.followers().get(0);
        try (HourglassClient client = HourglassClient.builder().servers(follower.target()).build()) {
            PublishResult published = client.publish(Message.of("via-follower", "hello"));
            assertFalse(published.id().isEmpty(), "the follower forwarded the publish");
            Recorder r = Recorder.acking();
            try (Subscription s = client.subscribe("via-follower", "g", r)) {
                await().atMost(Duration.ofSeconds(30)).until(() -> r.count() >= 1);
                assertEquals("hello", r.payloads().get(0));
            }
        }
    }
}
