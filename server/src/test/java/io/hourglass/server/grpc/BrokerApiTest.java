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
import io.hourglass.api.v1.Nack;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.PublishResponse;
import io.hourglass.api.v1.SubscribeInit;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.api.v1.SubscribeResponse;
import io.hourglass.server.testing.StreamRecorder;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The wire protocol of the Broker service on a real node, through raw stubs: what clients see. */
@Timeout(120)
class BrokerApiTest {
    @TempDir
    static Path dir;
    private static TestNode node;
    private static ManagedChannel channel;
    private static BrokerGrpc.BrokerBlockingStub blocking;
    private static BrokerGrpc.BrokerStub async;

    @BeforeAll
    static void start() {
        node = TestNode.start(dir);
        channel = ManagedChannelBuilder.forTarget(node.target()).usePlaintext().build();
        blocking = BrokerGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
        async = BrokerGrpc.newStub(channel);
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        node.close();
    }

    private static PublishMessage.Builder msg(String topic, String payload) {
        return PublishMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8(payload));
    }

    private static PublishResponse publish(PublishMessage.Builder... messages) {
        PublishRequest.Builder r = PublishRequest.newBuilder();
        for (PublishMessage.Builder m : messages) {
            r.addMessages(m);
        }
        return blocking.publish(r.build());
    }

    private static Status.Code codeOf(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    private static String invalid(PublishMessage.Builder m) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> publish(m));
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), e.getStatus().toString());
        return e.getStatus().getDescription();
    }

    @Test
    void publishAnswersIdsAndDueTimesOnceCommitted() {
        PublishResponse r = publish(msg("api-ids", "a").setDelayMs(2_000), msg("api-ids", "b"));
        assertEquals(2, r.getMessagesCount());
        var first = r.getMessages(0);
        assertEquals(48, first.getId().length(), "hex of the 24-byte tag");
        assertEquals(first.getEnqueuedAtMs() + 2_000, first.getDueAtMs());
        assertEquals(r.getMessages(1).getEnqueuedAtMs(), r.getMessages(1).getDueAtMs());
    }

    @Test
    void badPublishInputIsRefusedWithAReadableMessage() {
        assertTrue(invalid(msg("", "x")).contains("topic must not be empty"));
        assertTrue(invalid(msg("t".repeat(201), "x")).contains("limits.maxTopicLength"));
        assertTrue(invalid(msg("has space", "x")).contains("may only contain"));
        assertTrue(invalid(msg("t", "x").setDelayMs(-1)).contains("delay must not be negative"));
        assertTrue(invalid(msg("t", "x").setTtlMs(-5)).contains("ttl must not be negative"));
        String big = invalid(msg("t", "").setPayload(ByteString.copyFrom(new byte[(1 << 20) + 1])));
        assertTrue(big.contains("limits.maxPayloadBytes"), big);
        assertEquals(Status.Code.INVALID_ARGUMENT, codeOf(() -> blocking.publish(PublishRequest.getDefaultInstance())));
        // The node keeps serving after bad input.
        assertEquals(1, publish(msg("t", "fine")).getMessagesCount());
    }

    @Test
    void publishStreamAnswersEveryBatchInOrder() {
        StreamRecorder<PublishResponse> out = new StreamRecorder<>();
        StreamObserver<PublishRequest> in = async.publishStream(out);
        for (int b = 0; b < 3; b++) {
            in.onNext(PublishRequest.newBuilder().addMessages(msg("api-stream", "b" + b + "-0"))
                    .addMessages(msg("api-stream", "b" + b + "-1")).build());
        }
        in.onCompleted();
        PublishResponse r = out.awaitValue(x -> true);
        assertEquals(6, r.getMessagesCount());
        assertTrue(out.completed() || out.error() == null);
    }

    @Test
    void firstSubscribeFrameMustBeInit() {
        StreamRecorder<SubscribeResponse> out = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> in = async.subscribe(out);
        in.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(ByteString.copyFrom(new byte[24]))).build());
        Status s = Status.fromThrowable(out.awaitError());
        assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode());
        assertTrue(s.getDescription().contains("first Subscribe frame must be init"), s.getDescription());
    }

    @Test
    void subscribeWithABadTopicIsRefused() {
        StreamRecorder<SubscribeResponse> out = new StreamRecorder<>();
        async.subscribe(out).onNext(init("", "g"));
        Status s = Status.fromThrowable(out.awaitError());
        assertEquals(Status.Code.INVALID_ARGUMENT, s.getCode());
        assertTrue(s.getDescription().contains("topic must not be empty"));
    }

    private static SubscribeRequest init(String topic, String group) {
        return SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic(topic).setGroup(group)).build();
    }

    @Test
    void deliveriesCarryEverythingAndConfirmedAcksAreAnswered() {
        PublishResponse published = publish(msg("api-deliver", "hello").putHeaders("k", "v"));
        StreamRecorder<SubscribeResponse> out = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> in = async.subscribe(out);
        in.onNext(init("api-deliver", "g"));
        SubscribeResponse d = out.awaitValue(SubscribeResponse::hasDelivery);
        var delivery = d.getDelivery();
        assertEquals(published.getMessages(0).getId(), delivery.getId());
        assertEquals("hello", delivery.getPayload().toStringUtf8());
        assertEquals("v", delivery.getHeadersMap().get("k"));
        assertEquals(1, delivery.getAttempt());
        assertEquals(published.getMessages(0).getDueAtMs(), delivery.getDueAtMs());
        assertTrue(delivery.getDeliveredAtMs() >= delivery.getDueAtMs());
        assertTrue(out.values().get(0).hasSubscribed(), "subscribed comes first");
        in.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(delivery.getTag()).setConfirm(true)).build());
        var reply = out.awaitValue(SubscribeResponse::hasAckReply).getAckReply();
        assertTrue(reply.getOk(), reply.getError());
        assertTrue(node.node().store().queue().message(io.hourglass.core.storage.EventKey.fromBytes(delivery.getTag().toByteArray())).isEmpty());
        in.onCompleted();
    }

    @Test
    void unknownAndForeignTagsAreRefusedAndTheStreamStaysOpen() {
        publish(msg("api-tags", "m"));
        StreamRecorder<SubscribeResponse> owner = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> ownerIn = async.subscribe(owner);
        ownerIn.onNext(init("api-tags", "g"));
        ByteString tag = owner.awaitValue(SubscribeResponse::hasDelivery).getDelivery().getTag();

        StreamRecorder<SubscribeResponse> other = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> otherIn = async.subscribe(other);
        otherIn.onNext(init("api-tags", "g"));
        other.awaitValue(SubscribeResponse::hasSubscribed);
        otherIn.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(tag)).build());
        var foreign = other.awaitValue(SubscribeResponse::hasAckReply).getAckReply();
        assertFalse(foreign.getOk());
        assertEquals(Status.Code.INVALID_ARGUMENT.value(), foreign.getCode());
        assertTrue(foreign.getError().contains("no such message was delivered on this stream"), foreign.getError());

        ownerIn.onNext(SubscribeRequest.newBuilder().setNack(Nack.newBuilder().setTag(ByteString.copyFrom(new byte[24]))).build());
        var unknown = owner.awaitValue(SubscribeResponse::hasAckReply).getAckReply();
        assertFalse(unknown.getOk());
        ownerIn.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(ByteString.copyFromUtf8("short"))).build());
        owner.awaitValue(r -> r.hasAckReply() && r.getAckReply().getError().contains("24 bytes"));

        ownerIn.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(tag).setConfirm(true)).build());
        owner.awaitValue(r -> r.hasAckReply() && r.getAckReply().getOk());
        assertTrue(owner.error() == null && other.error() == null, "both streams still open");
        ownerIn.onCompleted();
        otherIn.onCompleted();
    }

    @Test
    void oneAckFrameAcknowledgesEveryTagItCarriesAndTooManyAreRefused() {
        publish(msg("api-batch", "a"), msg("api-batch", "b"), msg("api-batch", "c"));
        StreamRecorder<SubscribeResponse> out = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> in = async.subscribe(out);
        in.onNext(init("api-batch", "g"));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> out.values().stream().filter(SubscribeResponse::hasDelivery).count() == 3);
        java.util.List<ByteString> tags = out.values().stream().filter(SubscribeResponse::hasDelivery)
                .map(r -> r.getDelivery().getTag()).toList();

        Ack.Builder tooMany = Ack.newBuilder().setTag(tags.get(0));
        for (int i = 0; i <= SubscribeSession.MAX_MORE_TAGS; i++) {
            tooMany.addMoreTags(tags.get(1));
        }
        in.onNext(SubscribeRequest.newBuilder().setAck(tooMany).build());
        var refused = out.awaitValue(r -> r.hasAckReply() && !r.getAckReply().getOk()).getAckReply();
        assertEquals(Status.Code.INVALID_ARGUMENT.value(), refused.getCode());
        assertTrue(refused.getError().contains("at most 1024 more tags"), refused.getError());

        in.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(tags.get(0))
                .addMoreTags(tags.get(1)).addMoreTags(tags.get(2)).setConfirm(true)).build());
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> out.values().stream()
                .filter(r -> r.hasAckReply() && r.getAckReply().getOk()).count() == 3);
        for (ByteString tag : tags) {
            assertTrue(node.node().store().queue().message(io.hourglass.core.storage.EventKey.fromBytes(tag.toByteArray())).isEmpty(),
                    "every tag of the frame acknowledged and deleted");
        }
        assertTrue(out.error() == null, "the stream stays open");
        in.onCompleted();
    }

    @Test
    void plainAcksInOneFrameDeleteTheirMessagesAndABadTagIsRefusedAlone() {
        publish(msg("api-plain", "a"), msg("api-plain", "b"));
        StreamRecorder<SubscribeResponse> out = new StreamRecorder<>();
        StreamObserver<SubscribeRequest> in = async.subscribe(out);
        in.onNext(init("api-plain", "g"));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> out.values().stream().filter(SubscribeResponse::hasDelivery).count() == 2);
        java.util.List<ByteString> tags = out.values().stream().filter(SubscribeResponse::hasDelivery)
                .map(r -> r.getDelivery().getTag()).toList();
        ByteString unknown = ByteString.copyFrom(new byte[24]);
        in.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(tags.get(0)).addMoreTags(unknown)
                .addMoreTags(tags.get(1))).build());
        var refused = out.awaitValue(r -> r.hasAckReply() && !r.getAckReply().getOk()).getAckReply();
        assertEquals(unknown, refused.getTag());
        assertTrue(refused.getError().contains("no such message was delivered on this stream"), refused.getError());
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> tags.stream().allMatch(t ->
                node.node().store().queue().message(io.hourglass.core.storage.EventKey.fromBytes(t.toByteArray())).isEmpty()));
        assertEquals(1, out.values().stream().filter(SubscribeResponse::hasAckReply).count(), "one refusal, no other reply");
        in.onCompleted();
    }

    /** A Subscribe stream whose client reads only as many frames as the test grants. */
    private static final class Held extends StreamRecorder<SubscribeResponse>
            implements io.grpc.stub.ClientResponseObserver<SubscribeRequest, SubscribeResponse> {
        private volatile io.grpc.stub.ClientCallStreamObserver<SubscribeRequest> call;

        @Override
        public void beforeStart(io.grpc.stub.ClientCallStreamObserver<SubscribeRequest> requestStream) {
            call = requestStream;
            requestStream.disableAutoRequestWithInitial(1);
        }

        void request(int frames) {
            call.request(frames);
        }

        /** The stream's own side, for ACKs and the half-close. */
        StreamObserver<SubscribeRequest> requests() {
            return call;
        }

        List<io.hourglass.api.v1.Delivery> deliveries() {
            return values().stream().flatMap(r -> r.hasDeliveries() ? r.getDeliveries().getDeliveryList().stream()
                    : r.hasDelivery() ? java.util.stream.Stream.of(r.getDelivery()) : java.util.stream.Stream.empty()).toList();
        }
    }

    private static SubscribeRequest init(String topic, String group, int maxBatch) {
        return SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic(topic).setGroup(group)
                .setMaxBatch(maxBatch)).build();
    }

    /**
     * Subscribes group g to {@code topic} with {@code maxBatch}, reads nothing until all {@code n}
     * deliveries are handed to the stream (so they wait together), then reads until it has them all.
     */
    private static Held heldThenRead(String topic, int maxBatch, int n) {
        Held out = new Held();
        async.subscribe(out).onNext(init(topic, "g", maxBatch));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> node.node().engine().inFlightCount(topic) == n);
        out.request(1_000);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> out.deliveries().size() == n);
        return out;
    }

    /**
     * Deliveries that wait together on the server (here behind a client that reads nothing until all
     * 40 are handed to its stream) go out in frames of up to the client's {@code max_batch}, in
     * order, each acknowledged by its own tag.
     */
    @Test
    void readyDeliveriesGoTogetherToAConsumerThatAsksForBatches() {
        String pad = "x".repeat(8 * 1024); // 40 x 8 KiB: more than the transport's window holds
        PublishRequest.Builder r = PublishRequest.newBuilder();
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            sent.add("m" + i);
            r.addMessages(msg("api-frames", "m" + i + " " + pad));
        }
        blocking.publish(r.build());
        double framesBefore = deliveryFrames();
        Held out = heldThenRead("api-frames", 8, 40);
        StreamObserver<SubscribeRequest> in = out.requests();

        List<SubscribeResponse> batches = out.values().stream().filter(SubscribeResponse::hasDeliveries).toList();
        assertFalse(batches.isEmpty(), "deliveries waiting together came in deliveries frames");
        for (SubscribeResponse b : batches) {
            int n = b.getDeliveries().getDeliveryCount();
            assertTrue(n >= 2 && n <= 8, "a deliveries frame carries 2 to max_batch (8), got " + n);
        }
        List<io.hourglass.api.v1.Delivery> got = out.deliveries();
        assertEquals(sent, got.stream().map(d -> d.getPayload().toStringUtf8().split(" ")[0]).toList(), "in order, each once");
        long frames = out.values().stream().filter(f -> f.hasDelivery() || f.hasDeliveries()).count();
        assertEquals(frames, deliveryFrames() - framesBefore, "hourglass_delivery_frames_total counts them");
        Ack.Builder all = Ack.newBuilder().setTag(got.get(0).getTag()).setConfirm(true);
        got.subList(1, got.size()).forEach(d -> all.addMoreTags(d.getTag()));
        in.onNext(SubscribeRequest.newBuilder().setAck(all).build());
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> out.values().stream()
                .filter(f -> f.hasAckReply() && f.getAckReply().getOk()).count() == 40);
        assertEquals(0, node.node().engine().inFlightCount("api-frames"));
        in.onCompleted();
    }

    private static double deliveryFrames() {
        return metric("hourglass_delivery_frames_total");
    }

    /** A frame takes no delivery past ~256 KiB: large messages each go alone, whatever max_batch says. */
    @Test
    void largeDeliveriesGoOneFrameEachAndANegativeMaxBatchIsRefused() {
        String big = "y".repeat(200 * 1024);
        publish(msg("api-big", "a" + big), msg("api-big", "b" + big), msg("api-big", "c" + big));
        Held out = heldThenRead("api-big", 256, 3);
        assertTrue(out.values().stream().noneMatch(SubscribeResponse::hasDeliveries), "200 KiB each: one per frame");
        out.requests().onCompleted();

        StreamRecorder<SubscribeResponse> refused = new StreamRecorder<>();
        async.subscribe(refused).onNext(init("api-big", "g2", -1));
        StatusRuntimeException e = (StatusRuntimeException) refused.awaitError();
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("max_batch"), e.getStatus().getDescription());
    }

    /**
     * {@code max_unacked} (prefetch): a consumer that reads everything is handed no more than that
     * many unsettled deliveries, and the next ones once it settles some.
     */
    @Test
    void aConsumerIsHandedNoMoreThanItsMaxUnackedUntilItSettles() {
        for (int i = 0; i < 10; i++) {
            publish(msg("api-prefetch", "m" + i));
        }
        Held out = new Held();
        StreamObserver<SubscribeRequest> in = async.subscribe(out);
        out.request(1_000);
        in.onNext(SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder().setTopic("api-prefetch")
                .setGroup("g").setMaxUnacked(4)).build());
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> out.deliveries().size() == 4);
        double passes = metric("hourglass_dispatch_passes_total");
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> metric("hourglass_dispatch_passes_total") >= passes + 3);
        assertEquals(4, out.deliveries().size(), "three dispatch passes later, still the four unsettled");
        assertEquals(4, node.node().engine().inFlightCount("api-prefetch"));
        List<io.hourglass.api.v1.Delivery> first = out.deliveries();
        in.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(first.get(0).getTag())
                .addMoreTags(first.get(1).getTag())).build());
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> out.deliveries().size() == 6);
        for (int settled = 2; settled < 10; settled++) {
            int upTo = settled;
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                    .until(() -> out.deliveries().size() >= Math.min(10, upTo + 4));
            assertTrue(out.deliveries().size() <= upTo + 4, "at most four unsettled");
            in.onNext(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(out.deliveries().get(upTo).getTag())).build());
        }
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> node.node().engine().inFlightCount("api-prefetch") == 0);
        assertEquals(10, out.deliveries().stream().map(d -> d.getPayload().toStringUtf8()).distinct().count());
        in.onCompleted();

        StreamRecorder<SubscribeResponse> refused = new StreamRecorder<>();
        async.subscribe(refused).onNext(SubscribeRequest.newBuilder().setInit(SubscribeInit.newBuilder()
                .setTopic("api-prefetch").setGroup("g2").setMaxUnacked(-1)).build());
        StatusRuntimeException e = (StatusRuntimeException) refused.awaitError();
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertTrue(e.getStatus().getDescription().contains("max_unacked"), e.getStatus().getDescription());
    }

    private static double metric(String name) {
        var m = java.util.regex.Pattern.compile("(?m)^" + name + " ([0-9.eE+-]+)$").matcher(node.node().metrics().render());
        return m.find() ? Double.parseDouble(m.group(1)) : -1;
    }
}
