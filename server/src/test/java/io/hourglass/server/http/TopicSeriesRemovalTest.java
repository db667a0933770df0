package io.hourglass.server.http;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.Ack;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.SubscribeInit;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.api.v1.SubscribeResponse;
import io.hourglass.server.testing.StreamRecorder;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Per-topic series leave /metrics once their topic is gone, and stay while it has anything left. */
@Timeout(120)
class TopicSeriesRemovalTest {
    @TempDir
    static Path dir;
    private static TestNode node;
    private static ManagedChannel channel;

    @BeforeAll
    static void start() {
        node = TestNode.start(dir);
        channel = ManagedChannelBuilder.forTarget(node.target()).usePlaintext().build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        node.close();
    }

    private static void publish(String topic) {
        BrokerGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS).publish(PublishRequest.newBuilder()
                .addMessages(PublishMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8("m"))).build());
    }

    @Test
    void aTopicWhoseMessagesWereAllConsumedLosesItsSeriesAndOneWithPendingMessagesKeepsThem() {
        publish("gone-topic");
        publish("kept-topic");
        StreamRecorder<SubscribeResponse> rec = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> in = BrokerGrpc.newStub(channel).subscribe(rec);
        in.onNext(SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic("gone-topic")).build());
        SubscribeResponse d = rec.awaitValue(SubscribeResponse::hasDelivery);
        in.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(d.getDelivery().getTag())).build());
        assertTrue(node.node().metrics().render().contains("topic=\"gone-topic\""));
        assertEquals(0, node.node().removeSeriesOfGoneTopics(), "a consumer is still subscribed");
        in.onCompleted();

        await("the acked message is deleted and the consumer gone").atMost(Duration.ofSeconds(20))
                .until(() -> node.node().removeSeriesOfGoneTopics() == 1);
        String metrics = node.node().metrics().render();
        assertFalse(metrics.contains("topic=\"gone-topic\""), "series of a gone topic removed");
        assertTrue(metrics.contains("topic=\"kept-topic\""), "a topic with a pending message keeps its series");

        publish("gone-topic");
        assertTrue(node.node().metrics().render().contains("topic=\"gone-topic\""), "a topic used again comes back");
    }
}
