package io.hourglass.server.grpc;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.Ack;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.Nack;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.SubscribeInit;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.api.v1.SubscribeResponse;
import io.hourglass.server.testing.StreamRecorder;
import io.hourglass.server.testing.TestNode;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mass disconnects do not stall the node: 2 000 Subscribe streams, each holding a message in flight,
 * closed at once over a real channel leave the thread count bounded (releases run on the delivery
 * pipeline's thread, calls on the bounded gRPC pool), and a publish and a consume succeed right after.
 * Also: a NACKed message redelivered to a stream that is closing is released when the stream closes,
 * not after the in-flight timeout.
 */
@Timeout(240)
class MassDisconnectTest {
    private static final int STREAMS = 2_000;
    @TempDir
    static Path dir;
    private static TestNode node;
    private static ManagedChannel channel;

    @BeforeAll
    static void start() {
        // A long in-flight timeout: a release that does not happen shows as a wait of a minute, not 5 s.
        node = TestNode.start(dir, Map.of("delivery.inFlightTimeout", "60s", "grpc.maxConcurrentStreams", "5000"));
        channel = ManagedChannelBuilder.forTarget(node.target()).usePlaintext().build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        node.close();
    }

    private static void publish(String topic, int count) {
        PublishRequest.Builder r = PublishRequest.newBuilder();
        for (int i = 0; i < count; i++) {
            r.addMessages(PublishMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8("m" + i)));
        }
        BrokerGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS).publish(r.build());
    }

    private static SubscribeRequest init(String topic, String group) {
        return SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic(topic).setGroup(group)).build();
    }

    @Test
    void twoThousandStreamsClosedAtOnceLeaveTheThreadCountBoundedAndTheNodeServing() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        publish("warm", 1); // pools and connections up before the baseline
        int baseline = threads.getThreadCount();
        publish("mass", STREAMS);
        AtomicInteger delivered = new AtomicInteger();
        List<ClientCallStreamObserver<SubscribeRequest>> calls = new ArrayList<>();
        for (int i = 0; i < STREAMS; i++) {
            BrokerGrpc.newStub(channel).subscribe(new ClientResponseObserver<SubscribeRequest, SubscribeResponse>() {
                @Override
                public void beforeStart(ClientCallStreamObserver<SubscribeRequest> call) {
                    synchronized (calls) {
                        calls.add(call);
                    }
                }

                @Override
                public void onNext(SubscribeResponse r) {
                    if (r.hasDelivery()) {
                        delivered.incrementAndGet(); // held, never acked
                    }
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                }
            }).onNext(init("mass", "g"));
        }
        await("every stream holds a message").atMost(Duration.ofSeconds(90)).until(() -> delivered.get() >= STREAMS);
        assertEquals(STREAMS, node.node().engine().inFlightCount("mass"));
        int open = threads.getThreadCount();

        long closing = System.nanoTime();
        synchronized (calls) {
            calls.forEach(c -> c.cancel("mass disconnect", null));
        }
        int[] peak = {0};
        await("every consumer released").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(() -> {
            peak[0] = Math.max(peak[0], threads.getThreadCount());
            return node.node().engine().hub().size() == 0 && node.node().engine().inFlightCount("mass") == 0;
        });
        long releasedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closing);

        publish("after", 1);
        StreamRecorder<SubscribeResponse> rec = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> in = BrokerGrpc.newStub(channel).subscribe(rec);
        in.onNext(init("after", "g"));
        SubscribeResponse d = rec.awaitValue(SubscribeResponse::hasDelivery);
        in.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(d.getDelivery().getTag())).build());
        in.onCompleted();
        System.out.printf("threads: baseline %d, %d streams open %d, peak while closing %d; all released in %d ms%n",
                baseline, STREAMS, open, peak[0], releasedMs);
        assertTrue(peak[0] < baseline + 100, "peak " + peak[0] + " threads, baseline " + baseline);
    }

    @Test
    void aNackedMessageRedeliveredToAClosingStreamIsReleasedWhenItCloses() {
        for (int round = 0; round < 20; round++) {
            String topic = "nack-close-" + round;
            publish(topic, 1);
            StreamRecorder<SubscribeResponse> first = new StreamRecorder<>();
            StreamObserver<SubscribeRequest> in = BrokerGrpc.newStub(channel).subscribe(first);
            in.onNext(init(topic, "g"));
            SubscribeResponse d = first.awaitValue(SubscribeResponse::hasDelivery);
            // consume --nack --count 1: NACK, then close at once, while the redelivery races the close
            in.onNext(SubscribeRequest.newBuilder().setNack(Nack.newBuilder().setTag(d.getDelivery().getTag())).build());
            in.onCompleted();

            StreamRecorder<SubscribeResponse> second = new StreamRecorder<>();
            StreamObserver<SubscribeRequest> again = BrokerGrpc.newStub(channel).subscribe(second);
            again.onNext(init(topic, "g"));
            int r = round;
            await("round " + r + ": the next consumer gets it well before the 60 s in-flight timeout")
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> second.values().stream().anyMatch(SubscribeResponse::hasDelivery));
            again.onCompleted();
        }
    }
}
