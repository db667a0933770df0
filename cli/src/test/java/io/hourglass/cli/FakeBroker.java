package io.hourglass.cli;

import com.google.protobuf.ByteString;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.AckReply;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.Delivery;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.PublishResponse;
import io.hourglass.api.v1.PublishedMessage;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.api.v1.SubscribeResponse;
import io.hourglass.api.v1.Subscribed;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-process Broker for CLI tests: publishes are answered with fixed times (enqueued at
 * {@link #NOW}); a subscriber gets the deliveries queued for its topic; topic "bad" is refused.
 */
final class FakeBroker implements AutoCloseable {
    static final long NOW = 1_700_000_000_000L;

    final String name = InProcessServerBuilder.generateName();
    final List<PublishRequest> publishRequests = new CopyOnWriteArrayList<>();
    final List<SubscribeRequest> subscribeRequests = new CopyOnWriteArrayList<>();
    final Map<String, List<Delivery>> queued = new ConcurrentHashMap<>();
    /** When set, Publish answers wait for it (up to 20 s): tests see how many are in flight. */
    volatile java.util.concurrent.CountDownLatch publishGate;
    final java.util.concurrent.atomic.AtomicInteger publishesInFlight = new java.util.concurrent.atomic.AtomicInteger();
    final java.util.concurrent.atomic.AtomicInteger maxPublishesInFlight = new java.util.concurrent.atomic.AtomicInteger();
    private final AtomicLong sequence = new AtomicLong();
    private final Server server;

    FakeBroker() throws IOException {
        server = InProcessServerBuilder.forName(name).addService(new Service()).build().start();
    }

    String address() {
        return name + ":1";
    }

    List<PublishMessage> publishedMessages() {
        return publishRequests.stream().flatMap(r -> r.getMessagesList().stream()).toList();
    }

    Delivery queue(String topic, String payload, Map<String, String> headers) {
        byte[] tag = ByteBuffer.allocate(24).putLong(7).putLong(NOW).putLong(sequence.incrementAndGet()).array();
        Delivery d = Delivery.newBuilder().setTag(ByteString.copyFrom(tag))
                .setId(HexFormat.of().formatHex(tag)).setTopic(topic)
                .setPayload(ByteString.copyFromUtf8(payload)).putAllHeaders(headers)
                .setEnqueuedAtMs(NOW).setDueAtMs(NOW + 10).setDeliveredAtMs(NOW + 20).setAttempt(1)
                .build();
        queued.computeIfAbsent(topic, t -> new CopyOnWriteArrayList<>()).add(d);
        return d;
    }

    @Override
    public void close() {
        server.shutdownNow();
    }

    private final class Service extends BrokerGrpc.BrokerImplBase {
        @Override
        public void publish(PublishRequest request, StreamObserver<PublishResponse> response) {
            maxPublishesInFlight.accumulateAndGet(publishesInFlight.incrementAndGet(), Math::max);
            try {
                java.util.concurrent.CountDownLatch gate = publishGate;
                if (gate != null && !gate.await(20, java.util.concurrent.TimeUnit.SECONDS)) {
                    throw new IllegalStateException("publish gate never opened");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                publishesInFlight.decrementAndGet();
            }
            publishRequests.add(request);
            if (request.getMessagesList().stream().anyMatch(m -> m.getTopic().equals("bad"))) {
                response.onError(Status.INVALID_ARGUMENT
                        .withDescription("topic 'bad' is not allowed").asRuntimeException());
                return;
            }
            PublishResponse.Builder answer = PublishResponse.newBuilder();
            for (PublishMessage m : request.getMessagesList()) {
                byte[] tag = ByteBuffer.allocate(24).putLong(7).putLong(NOW + m.getDelayMs())
                        .putLong(sequence.incrementAndGet()).array();
                answer.addMessages(PublishedMessage.newBuilder().setId(HexFormat.of().formatHex(tag))
                        .setEnqueuedAtMs(NOW).setDueAtMs(NOW + m.getDelayMs()));
            }
            response.onNext(answer.build());
            response.onCompleted();
        }

        @Override
        public StreamObserver<SubscribeRequest> subscribe(StreamObserver<SubscribeResponse> response) {
            return new StreamObserver<>() {
                @Override
                public void onNext(SubscribeRequest request) {
                    subscribeRequests.add(request);
                    synchronized (this) {
                        if (request.hasInit()) {
                            String topic = request.getInit().getTopic();
                            if (topic.equals("bad")) {
                                response.onError(Status.INVALID_ARGUMENT
                                        .withDescription("topic 'bad' is not allowed").asRuntimeException());
                                return;
                            }
                            response.onNext(SubscribeResponse.newBuilder()
                                    .setSubscribed(Subscribed.newBuilder().setConsumerId("c1")).build());
                            for (Delivery d : queued.getOrDefault(topic, List.of())) {
                                response.onNext(SubscribeResponse.newBuilder().setDelivery(d).build());
                            }
                        } else if (request.hasAck() && request.getAck().getConfirm()) {
                            response.onNext(SubscribeResponse.newBuilder().setAckReply(AckReply.newBuilder()
                                    .setTag(request.getAck().getTag()).setOk(true)).build());
                        }
                    }
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public synchronized void onCompleted() {
                    response.onCompleted();
                }
            };
        }
    }
}
