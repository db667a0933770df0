package io.hourglass.client;

import com.google.protobuf.ByteString;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
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
import java.util.ArrayDeque;
import java.util.HexFormat;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * An in-process Broker that tests script: publish failures, refusals, and each Subscribe stream
 * (deliveries sent under gRPC flow control, failures, completion).
 */
final class FakeBroker implements AutoCloseable {
    final String name = InProcessServerBuilder.generateName();
    final List<PublishRequest> publishRequests = new CopyOnWriteArrayList<>();
    /** Statuses the next Publish calls fail with, in order, before any succeeds. */
    final Queue<Status> publishFailures = new ConcurrentLinkedQueue<>();
    /** Refuses a request when this returns non-null for one of its messages. */
    volatile Function<PublishMessage, Status> validator =
            m -> m.getTopic().equals("bad") ? Status.INVALID_ARGUMENT.withDescription("topic 'bad' is not allowed") : null;
    /** Fails every Subscribe init with this status when set. */
    volatile Status initFailure;
    final List<FakeStream> streams = new CopyOnWriteArrayList<>();
    /** When set, Publish calls wait for it (at most 10 s) before they are answered. */
    volatile java.util.concurrent.CountDownLatch publishGate;
    /** Publish calls go unanswered while set, as on a server slow to commit or paused. */
    volatile boolean publishesHang;
    /** WhoAmI calls (the client's liveness question) go unanswered while set, as on a paused server. */
    volatile boolean questionsHang;
    private final AtomicLong sequence = new AtomicLong();
    private final Server server;

    FakeBroker() throws IOException {
        server = InProcessServerBuilder.forName(name).addService(new Service()).addService(new Questions()).build()
                .start();
    }

    /** The address a client uses to reach this broker through {@link #channels()}. */
    String address() {
        return name + ":1";
    }

    /** A channel factory reaching in-process servers by the host part of the address. */
    static ChannelFactory channels() {
        return address -> io.grpc.inprocess.InProcessChannelBuilder.forName(address.host()).build();
    }

    FakeStream stream(int index) {
        return streams.get(index);
    }

    int publishedMessageCount() {
        return publishRequests.stream().mapToInt(PublishRequest::getMessagesCount).sum();
    }

    byte[] nextTag() {
        return ByteBuffer.allocate(24).putLong(42).putLong(1000).putLong(sequence.incrementAndGet()).array();
    }

    @Override
    public void close() {
        server.shutdownNow();
    }

    private final class Questions extends io.hourglass.api.v1.SecurityGrpc.SecurityImplBase {
        @Override
        public void whoAmI(io.hourglass.api.v1.WhoAmIRequest request,
                           StreamObserver<io.hourglass.api.v1.WhoAmIResponse> response) {
            if (!questionsHang) {
                response.onNext(io.hourglass.api.v1.WhoAmIResponse.getDefaultInstance());
                response.onCompleted();
            }
        }
    }

    private final class Service extends BrokerGrpc.BrokerImplBase {
        @Override
        public void publish(PublishRequest request, StreamObserver<PublishResponse> response) {
            publishRequests.add(request);
            java.util.concurrent.CountDownLatch gate = publishGate;
            if (gate != null) {
                try {
                    gate.await(10, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (publishesHang) {
                return;
            }
            Status failure = publishFailures.poll();
            if (failure == null) {
                failure = request.getMessagesList().stream().map(validator)
                        .filter(s -> s != null).findFirst().orElse(null);
            }
            if (failure != null) {
                response.onError(failure.asRuntimeException());
                return;
            }
            PublishResponse.Builder answer = PublishResponse.newBuilder();
            for (PublishMessage m : request.getMessagesList()) {
                answer.addMessages(PublishedMessage.newBuilder()
                        .setId(HexFormat.of().formatHex(nextTag()))
                        .setEnqueuedAtMs(1_000).setDueAtMs(1_000 + m.getDelayMs()));
            }
            response.onNext(answer.build());
            response.onCompleted();
        }

        @Override
        public StreamObserver<SubscribeRequest> subscribe(StreamObserver<SubscribeResponse> response) {
            FakeStream stream = new FakeStream((ServerCallStreamObserver<SubscribeResponse>) response);
            streams.add(stream);
            return stream;
        }
    }

    /** One server side of a Subscribe call. */
    final class FakeStream implements StreamObserver<SubscribeRequest> {
        /** What the client sent, an Ack frame with more tags split into one Ack per tag. */
        final List<SubscribeRequest> received = new CopyOnWriteArrayList<>();
        /** Ack frames as they came, before splitting. */
        final List<io.hourglass.api.v1.Ack> ackFrames = new CopyOnWriteArrayList<>();
        final Set<ByteString> delivered = ConcurrentHashMap.newKeySet();
        volatile boolean halfClosed;
        volatile boolean cancelled;
        final AtomicLong sent = new AtomicLong();
        private final ServerCallStreamObserver<SubscribeResponse> out;
        private final ArrayDeque<SubscribeResponse> outbox = new ArrayDeque<>();
        private boolean ended;

        FakeStream(ServerCallStreamObserver<SubscribeResponse> out) {
            this.out = out;
            out.setOnReadyHandler(this::drain);
            out.setOnCancelHandler(() -> cancelled = true);
        }

        /** Queues a delivery; it is sent when the client has asked for more. */
        Delivery deliver(String topic, String payload, int attempt) {
            return deliver(topic, payload, attempt, true);
        }

        /** Queues a delivery the server then forgets, so that its ACK is refused. */
        Delivery deliverForgotten(String topic, String payload) {
            return deliver(topic, payload, 1, false);
        }

        /** Queues one {@code deliveries} frame carrying these payloads, in order. */
        void deliverBatch(String topic, List<String> payloads) {
            io.hourglass.api.v1.Deliveries.Builder batch = io.hourglass.api.v1.Deliveries.newBuilder();
            payloads.forEach(p -> batch.addDelivery(delivery(topic, p, 1, true)));
            push(SubscribeResponse.newBuilder().setDeliveries(batch).build());
        }

        private Delivery deliver(String topic, String payload, int attempt, boolean remember) {
            Delivery d = delivery(topic, payload, attempt, remember);
            push(SubscribeResponse.newBuilder().setDelivery(d).build());
            return d;
        }

        private Delivery delivery(String topic, String payload, int attempt, boolean remember) {
            byte[] tag = nextTag();
            Delivery d = Delivery.newBuilder().setTag(ByteString.copyFrom(tag))
                    .setId(HexFormat.of().formatHex(tag)).setTopic(topic)
                    .setPayload(ByteString.copyFromUtf8(payload)).putHeaders("k", "v")
                    .setEnqueuedAtMs(1_000).setDueAtMs(2_000).setDeliveredAtMs(3_000)
                    .setAttempt(attempt).build();
            if (remember) {
                delivered.add(d.getTag());
            }
            return d;
        }

        synchronized void fail(Status status) {
            ended = true;
            out.onError(status.asRuntimeException());
        }

        List<SubscribeRequest> acks() {
            return received.stream().filter(SubscribeRequest::hasAck).toList();
        }

        List<SubscribeRequest> nacks() {
            return received.stream().filter(SubscribeRequest::hasNack).toList();
        }

        boolean initReceived() {
            return !received.isEmpty() && received.get(0).hasInit();
        }

        private void push(SubscribeResponse response) {
            synchronized (this) {
                outbox.add(response);
            }
            drain();
        }

        private synchronized void drain() {
            while (!ended && !cancelled && out.isReady() && !outbox.isEmpty()) {
                out.onNext(outbox.poll());
                sent.incrementAndGet();
            }
        }

        @Override
        public void onNext(SubscribeRequest frame) {
            if (!frame.hasAck()) {
                handle(frame);
                return;
            }
            ackFrames.add(frame.getAck());
            List<ByteString> tags = new java.util.ArrayList<>();
            tags.add(frame.getAck().getTag());
            tags.addAll(frame.getAck().getMoreTagsList());
            for (ByteString tag : tags) {
                handle(SubscribeRequest.newBuilder().setAck(io.hourglass.api.v1.Ack.newBuilder().setTag(tag)
                        .setConfirm(frame.getAck().getConfirm())).build());
            }
        }

        private void handle(SubscribeRequest request) {
            received.add(request);
            if (request.hasInit()) {
                Status failure = initFailure;
                if (failure != null) {
                    fail(failure);
                    return;
                }
                push(SubscribeResponse.newBuilder()
                        .setSubscribed(Subscribed.newBuilder().setConsumerId("c-" + streams.size())).build());
            } else if (request.hasAck()) {
                ByteString tag = request.getAck().getTag();
                if (!delivered.remove(tag)) {
                    push(reply(tag, false));
                } else if (request.getAck().getConfirm()) {
                    push(reply(tag, true));
                }
            } else if (request.hasNack() && !delivered.remove(request.getNack().getTag())) {
                push(reply(request.getNack().getTag(), false));
            }
        }

        private SubscribeResponse reply(ByteString tag, boolean ok) {
            AckReply.Builder r = AckReply.newBuilder().setTag(tag).setOk(ok);
            if (!ok) {
                r.setCode(Status.Code.INVALID_ARGUMENT.value()).setError("unknown delivery tag");
            }
            return SubscribeResponse.newBuilder().setAckReply(r).build();
        }

        @Override
        public void onError(Throwable t) {
            cancelled = true;
        }

        @Override
        public synchronized void onCompleted() {
            halfClosed = true;
            if (!ended) {
                ended = true;
                out.onCompleted();
            }
        }
    }
}
