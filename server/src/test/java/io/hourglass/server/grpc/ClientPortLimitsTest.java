package io.hourglass.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.Ack;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomSendRequest;
import io.hourglass.api.v1.RoomsGrpc;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionResponse;
import io.hourglass.api.v1.SubscribeInit;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.api.v1.SubscribeResponse;
import io.hourglass.server.testing.StreamRecorder;
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

/**
 * What a hostile or buggy client meets on the client port: streams that never say what they are for
 * are closed, the consumer cap holds, everything a message carries counts against its limits, and no
 * error reply echoes an oversized input back.
 */
@Timeout(120)
class ClientPortLimitsTest {
    private static final io.grpc.MethodDescriptor.Marshaller<byte[]> BYTES = new io.grpc.MethodDescriptor.Marshaller<>() {
        @Override
        public java.io.InputStream stream(byte[] value) {
            return new java.io.ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(java.io.InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    };

    private static final String MIB = "x".repeat(1 << 20);
    @TempDir
    static Path dir;
    private static TestNode node;
    private static ManagedChannel channel;

    @BeforeAll
    static void start() {
        node = TestNode.start(dir, Map.of("grpc.initTimeout", "500ms", "grpc.maxConsumers", "3"));
        channel = ManagedChannelBuilder.forTarget(node.target()).usePlaintext().maxInboundMessageSize(8 << 20).build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        node.close();
    }

    private static BrokerGrpc.BrokerBlockingStub blocking() {
        return BrokerGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    private static Status refusal(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus();
    }

    @Test
    void aSubscribeStreamThatNeverSendsInitIsClosedWithDeadlineExceeded() {
        StreamRecorder<SubscribeResponse> rec = new StreamRecorder<>();
        long opened = System.nanoTime();
        BrokerGrpc.newStub(channel).subscribe(rec); // and then nothing
        Status s = Status.fromThrowable(rec.awaitError());
        assertEquals(Status.Code.DEADLINE_EXCEEDED, s.getCode(), s.toString());
        assertTrue(s.getDescription().contains("no init frame within 500ms"), s.getDescription());
        assertTrue(System.nanoTime() - opened >= Duration.ofMillis(450).toNanos(), "not before the timeout");
    }

    @Test
    void aRoomSessionThatNeverSendsOpenIsClosedWithDeadlineExceeded() {
        StreamRecorder<SessionResponse> rec = new StreamRecorder<>();
        RoomsGrpc.newStub(channel).session(rec);
        Status s = Status.fromThrowable(rec.awaitError());
        assertEquals(Status.Code.DEADLINE_EXCEEDED, s.getCode(), s.toString());
        assertTrue(s.getDescription().contains("no open frame"), s.getDescription());
    }

    @Test
    void aStreamThatSentInitInTimeStaysOpenPastTheInitTimeout() {
        StreamRecorder<SubscribeResponse> rec = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> in = BrokerGrpc.newStub(channel).subscribe(rec);
        in.onNext(SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic("init-ok")).build());
        rec.awaitValue(SubscribeResponse::hasSubscribed);
        org.awaitility.Awaitility.await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
                .until(() -> !rec.ended());
        in.onCompleted();
    }

    @Test
    void consumersBeyondTheNodesCapAreRefusedWithResourceExhaustedUntilOneLeaves() {
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> node.node().engine().hub().size() == 0);
        java.util.List<StreamObserver<SubscribeRequest>> open = new java.util.ArrayList<>();
        for (int i = 0; i < 3; i++) {
            StreamRecorder<SubscribeResponse> rec = new StreamRecorder<>();
            StreamObserver<SubscribeRequest> in = BrokerGrpc.newStub(channel).subscribe(rec);
            in.onNext(SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic("cap")).build());
            rec.awaitValue(SubscribeResponse::hasSubscribed);
            open.add(in);
        }
        StreamRecorder<SubscribeResponse> fourth = new StreamRecorder<>();
        BrokerGrpc.newStub(channel).subscribe(fourth)
                .onNext(SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic("cap")).build());
        Status s = Status.fromThrowable(fourth.awaitError());
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s.toString());
        assertTrue(s.getDescription().contains("grpc.maxConsumers"), s.getDescription());

        open.remove(0).onCompleted();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            // the slot comes back when the closed stream's end reaches the server
            StreamRecorder<SubscribeResponse> probe = new StreamRecorder<>();
            StreamObserver<SubscribeRequest> p = BrokerGrpc.newStub(channel).subscribe(probe);
            p.onNext(SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic("cap")).build());
            probe.awaitValue(r -> true);
            assertTrue(probe.values().stream().anyMatch(SubscribeResponse::hasSubscribed), "slot given back");
            open.add(p);
        });
        open.forEach(StreamObserver::onCompleted);
    }

    @Test
    void aRandomAckTagIsAnsweredNoSuchMessageNotAKeyParsingError() {
        StreamRecorder<SubscribeResponse> rec = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> in = BrokerGrpc.newStub(channel).subscribe(rec);
        in.onNext(SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic("random-ack")).build());
        rec.awaitValue(SubscribeResponse::hasSubscribed);
        byte[] tag = new byte[24];
        java.util.Arrays.fill(tag, (byte) 0xE0); // a negative sequence and due time: no key the broker makes
        in.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(ByteString.copyFrom(tag))).build());
        String error = rec.awaitValue(SubscribeResponse::hasAckReply).getAckReply().getError();
        assertTrue(error.contains("no such message was delivered on this stream"), error);
        assertFalse(error.contains("must not be negative"), error);
        in.onCompleted();
    }

    @Test
    void aMegabyteHeaderWithAMegabytePayloadIsRefused() {
        Status s = refusal(() -> blocking().publish(PublishRequest.newBuilder().addMessages(PublishMessage.newBuilder()
                .setTopic("big").setPayload(ByteString.copyFromUtf8(MIB)).putHeaders("h", MIB)).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode(), s.toString());
        assertTrue(s.getDescription().contains("limits.maxHeaderBytes"), s.getDescription());
        Status many = refusal(() -> {
            PublishMessage.Builder m = PublishMessage.newBuilder().setTopic("big");
            for (int i = 0; i < 65; i++) {
                m.putHeaders("k" + i, "v");
            }
            blocking().publish(PublishRequest.newBuilder().addMessages(m).build());
        });
        assertTrue(many.getDescription().contains("limits.maxHeaders"), many.getDescription());
    }

    @Test
    void aMegabyteProducerIdIsRefusedAndNotKept() {
        Status s = refusal(() -> blocking().publish(PublishRequest.newBuilder().addMessages(PublishMessage.newBuilder()
                .setTopic("pid").setPayload(ByteString.copyFromUtf8("p")).setProducerId(MIB)).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode(), s.toString());
        assertTrue(s.getDescription().contains("limits.maxProducerIdBytes"), s.getDescription());
        assertTrue(node.node().store().keyOfProducerId(MIB).isEmpty(), "nothing was kept for it");
        Status room = refusal(() -> RoomsGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .send(RoomSendRequest.newBuilder().setRoom("r").setPayload(ByteString.copyFromUtf8("p"))
                        .setProducerId(MIB).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, room.getCode(), room.toString());
    }

    @Test
    void aMegabyteRoomClientIdIsRefusedWithAShortDescription() {
        Status s = refusal(() -> RoomsGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .send(RoomSendRequest.newBuilder().setRoom("r").setPayload(ByteString.copyFromUtf8("p"))
                        .setClientId(MIB).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode(), s.toString());
        assertTrue(s.getDescription().length() <= StatusMapper.MAX_DESCRIPTION, s.getDescription());
        Status oob = refusal(() -> RoomsGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .sendOutOfBand(RoomSendRequest.newBuilder().setRoom("r").setClientId("y" + MIB).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, oob.getCode(), oob.toString());
    }

    @Test
    void everyDescriptionIsBoundedWhateverProducedIt() {
        String long1 = "z".repeat(5_000);
        String bounded = StatusMapper.bounded(long1);
        assertTrue(bounded.length() <= StatusMapper.MAX_DESCRIPTION, bounded);
        assertTrue(bounded.contains("more characters"), bounded);
        assertEquals("short", StatusMapper.bounded("short"));
    }

    @Test
    void aRoomAckTimeoutAboveTheConfiguredMaximumIsRefused() {
        Status s = refusal(() -> RoomsGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .configure(RoomConfigureRequest.newBuilder().setRoom("r").setAckTimeoutMs(Long.MAX_VALUE).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode(), s.toString());
        assertTrue(s.getDescription().contains("rooms.maxAckTimeout (1h)"), s.getDescription());
        RoomsGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .configure(RoomConfigureRequest.newBuilder().setRoom("r").setAckTimeoutMs(3_600_000).build());
    }

    @Test
    void theClientPortDoesNotServeTheReplicaService() {
        // The node-to-node method, called by its full name on the client port, as an intruder would.
        io.grpc.MethodDescriptor<byte[], byte[]> fetch = io.grpc.MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
                .setFullMethodName("hourglass.replica.Replica/FetchCheckpoint")
                .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
        Status s = refusal(() -> io.grpc.stub.ClientCalls.blockingServerStreamingCall(channel, fetch,
                io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), new byte[0]).hasNext());
        assertEquals(Status.Code.UNIMPLEMENTED, s.getCode(), s.toString());
    }
}
