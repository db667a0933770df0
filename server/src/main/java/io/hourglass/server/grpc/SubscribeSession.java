package io.hourglass.server.grpc;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.Ack;
import io.hourglass.api.v1.AckReply;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.api.v1.SubscribeResponse;
import io.hourglass.api.v1.Subscribed;
import io.hourglass.core.HourglassException;
import io.hourglass.core.command.PublishValidator;
import io.hourglass.core.delivery.Consumer;
import io.hourglass.core.delivery.Delivery;
import io.hourglass.core.delivery.DeliveryEngine;
import io.hourglass.core.storage.EventKey;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Subscribe stream: the init frame registers a consumer; deliveries are drained from its
 * buffer only while gRPC flow control says the client can take more; ACK/NACK frames go to the
 * engine. A refused ACK/NACK is answered with an {@link AckReply} and the stream stays open.
 * Writes to the response stream happen under its monitor; draining runs on the writer executor.
 */
final class SubscribeSession implements StreamObserver<SubscribeRequest>, Consumer.Sink {
    private static final Logger LOG = LoggerFactory.getLogger(SubscribeSession.class);
    /** Tags an Ack frame may carry besides its first (broker.proto): one refusal per bad tag stays bounded. */
    static final int MAX_MORE_TAGS = 1024;
    /** Most deliveries in one {@code deliveries} frame, whatever the client asks (broker.proto). */
    static final int MAX_BATCH = 256;
    /**
     * A {@code deliveries} frame takes no more delivery after this many bytes; a delivery that would
     * cross it starts the next frame (one larger alone goes alone), so frames stay far under the
     * clients' 4 MiB inbound limit.
     */
    static final int BATCH_BYTES = 256 * 1024;
    /** How often a Subscribe waiting out an election asks the engine again. */
    static final long ELECTION_POLL_MS = 20;

    /** The delivery engine of a topic's shard. */
    private final java.util.function.Function<String, DeliveryEngine> engines;
    /** The engine of the subscribed topic's shard; set once, before the consumer exists. */
    private volatile DeliveryEngine engine;
    private final PublishValidator validator;
    private final ServerCallStreamObserver<SubscribeResponse> out;
    private final Executor writer;
    private final io.hourglass.server.NodeMetrics metrics;
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final StreamLimits limits;
    /** Closes the stream unless the init frame comes in time; cancelled by the first frame. */
    private final StreamLimits.Deadline initDeadline;
    /** Set once a consumer slot was taken; cleared by the one release that gives it back. */
    private final AtomicBoolean holdsSlot = new AtomicBoolean();
    private volatile Consumer consumer;
    /** Deliveries per frame the client takes (1: a {@code delivery} frame each); set by init. */
    private volatile int maxBatch = 1;
    /** The client's {@code init.max_unacked}: 0 for no limit. */
    private volatile int maxUnacked;
    /** Polled for a frame it did not fit in, not sent yet; the next frame starts with it. Guarded by {@code out}. */
    private io.hourglass.api.v1.Delivery carry;
    private volatile boolean initialised;
    private volatile boolean ended;

    SubscribeSession(java.util.function.Function<String, DeliveryEngine> engines, PublishValidator validator, ServerCallStreamObserver<SubscribeResponse> out,
                     Executor writer, io.hourglass.server.NodeMetrics metrics, StreamLimits limits) {
        this.metrics = metrics;
        this.limits = limits;
        this.engines = engines;
        this.validator = validator;
        this.out = out;
        this.writer = writer;
        out.setOnReadyHandler(this::deliveriesAvailable);
        out.setOnCancelHandler(this::release);
        this.initDeadline = limits.awaitFirstFrame("Subscribe", "init", this::fail);
    }

    @Override
    public void onNext(SubscribeRequest frame) {
        if (ended) {
            return;
        }
        if (!initialised) {
            init(frame);
            return;
        }
        switch (frame.getFrameCase()) {
            case ACK -> {
                Ack a = frame.getAck();
                if (a.getMoreTagsCount() > MAX_MORE_TAGS) {
                    refuse(a.getTag(), "an Ack frame carries at most " + MAX_MORE_TAGS + " more tags, got "
                            + a.getMoreTagsCount() + "; none of them was acknowledged");
                    return;
                }
                if (a.getConfirm() || a.getMoreTagsCount() == 0) {
                    ack(a.getTag(), a.getConfirm());
                    a.getMoreTagsList().forEach(more -> ack(more, a.getConfirm()));
                } else {
                    ackAll(a);
                }
            }
            case NACK -> nack(frame.getNack().getTag(), frame.getNack().getDelayMs());
            case INIT -> fail(Status.FAILED_PRECONDITION.withDescription("this stream is already subscribed; open a new stream for another topic"));
            default -> fail(Status.INVALID_ARGUMENT.withDescription("empty Subscribe frame: send init, ack or nack"));
        }
    }

    private void init(SubscribeRequest frame) {
        initDeadline.cancel();
        if (frame.getFrameCase() != SubscribeRequest.FrameCase.INIT) {
            fail(Status.INVALID_ARGUMENT.withDescription(
                    "the first Subscribe frame must be init (topic and group), got " + frame.getFrameCase()));
            return;
        }
        initialised = true;
        String topic = frame.getInit().getTopic();
        String group = frame.getInit().getGroup();
        try {
            validator.validateTopic(topic);
            validator.validateGroup(group);
        } catch (HourglassException e) {
            fail(StatusMapper.toStatus(e));
            return;
        }
        int batch = frame.getInit().getMaxBatch();
        if (batch < 0) {
            fail(Status.INVALID_ARGUMENT.withDescription("init.max_batch is the most deliveries per frame: 0 or more, got " + batch));
            return;
        }
        maxBatch = Math.max(1, Math.min(batch, MAX_BATCH));
        maxUnacked = frame.getInit().getMaxUnacked();
        if (maxUnacked < 0) {
            fail(Status.INVALID_ARGUMENT.withDescription(
                    "init.max_unacked is the most unsettled deliveries: 0 (no limit) or more, got " + maxUnacked));
            return;
        }
        Status full = limits.acquireConsumer();
        if (full != null) {
            fail(full);
            return;
        }
        holdsSlot.set(true);
        if (ended) { // cancelled meanwhile: release() may have run before the slot was taken
            giveBackSlot();
            return;
        }
        engine = engines.apply(topic);
        register(topic, group, System.nanoTime() + limits.electionWait().toNanos());
    }

    /**
     * Registers the consumer with the engine. On a node that knows no leader (an election under way,
     * as right after the leader's process died) the registration is tried again every
     * {@link #ELECTION_POLL_MS} until {@code giveUpAt}: this node is then likely the new leader, or
     * learns it and names it, within ~100 ms, where a refusal sent the client around the other servers
     * first (measured: the consumer resubscribed ~270 ms after the new leader was ready).
     */
    private void register(String topic, String group, long giveUpAt) {
        if (ended) {
            return;
        }
        engine.subscribe(topic, group, this, maxUnacked).whenComplete((c, error) -> {
            if (error != null) {
                if (noLeaderKnown(error) && System.nanoTime() < giveUpAt
                        && limits.later(() -> register(topic, group, giveUpAt), ELECTION_POLL_MS)) {
                    LOG.debug("subscribe to {} waits for the election", topic);
                    return;
                }
                fail(StatusMapper.toStatus(error));
                return;
            }
            consumer = c;
            LOG.debug("subscribed {} to {}", c.id(), topic);
            if (ended) {
                engine.disconnect(c);
                return;
            }
            write(SubscribeResponse.newBuilder().setSubscribed(Subscribed.newBuilder().setConsumerId(c.id())).build());
            deliveriesAvailable();
        });
    }

    /** A refusal by a node that is not the leader and knows none to name. */
    private static boolean noLeaderKnown(Throwable error) {
        return StatusMapper.unwrap(error) instanceof io.hourglass.core.NotLeaderException nle && nle.leaderHint().isEmpty();
    }

    private void ack(ByteString tagBytes, boolean confirm) {
        Consumer c = consumer;
        EventKey tag;
        try {
            tag = parseTag(tagBytes, c);
        } catch (IllegalArgumentException e) {
            refuse(tagBytes, e.getMessage());
            return;
        }
        try {
            var committed = engine.ack(c, tag, confirm);
            if (confirm) {
                committed.whenComplete((v, error) -> {
                    if (error == null) {
                        write(SubscribeResponse.newBuilder().setAckReply(AckReply.newBuilder().setTag(tagBytes).setOk(true)).build());
                    } else {
                        Status s = Status.fromThrowable(StatusMapper.toStatus(error));
                        write(SubscribeResponse.newBuilder().setAckReply(AckReply.newBuilder().setTag(tagBytes).setOk(false)
                                .setCode(s.getCode().value()).setError("ACK not confirmed: " + s.getDescription())).build());
                    }
                });
            }
        } catch (HourglassException e) {
            refuse(tagBytes, e.getMessage());
        }
    }

    /** Plain ACKs of a whole frame: one event on the delivery loop; each bad tag refused on its own. */
    private void ackAll(Ack a) {
        Consumer c = consumer;
        List<ByteString> frameTags = new ArrayList<>(1 + a.getMoreTagsCount());
        frameTags.add(a.getTag());
        frameTags.addAll(a.getMoreTagsList());
        List<EventKey> tags = new ArrayList<>(frameTags.size());
        for (ByteString tagBytes : frameTags) {
            try {
                tags.add(parseTag(tagBytes, c));
            } catch (IllegalArgumentException e) {
                refuse(tagBytes, e.getMessage());
            }
        }
        if (tags.isEmpty()) {
            return;
        }
        for (EventKey refused : engine.ackAll(c, tags)) {
            refuse(ByteString.copyFrom(refused.toBytes()), DeliveryEngine.notOwned("ACK", refused));
        }
    }

    private void nack(ByteString tagBytes, long delayMs) {
        try {
            validator.validateNackDelay(delayMs);
            engine.nack(consumer, parseTag(tagBytes, consumer), delayMs);
        } catch (IllegalArgumentException | HourglassException e) {
            refuse(tagBytes, e.getMessage());
        }
    }

    private static EventKey parseTag(ByteString tagBytes, Consumer c) {
        if (c == null) {
            throw new IllegalArgumentException("the subscription is not active yet; nothing was delivered on this stream");
        }
        if (tagBytes.size() != EventKey.LENGTH) {
            throw new IllegalArgumentException("a tag has " + EventKey.LENGTH + " bytes, got " + tagBytes.size()
                    + ": no such message was delivered on this stream");
        }
        try {
            return EventKey.fromBytes(tagBytes.toByteArray());
        } catch (IllegalArgumentException e) { // not a key the broker could have made (negative sequence, ...)
            throw new IllegalArgumentException("tag " + HexFormat.of().formatHex(tagBytes.toByteArray())
                    + ": no such message was delivered on this stream");
        }
    }

    private void refuse(ByteString tag, String why) {
        write(SubscribeResponse.newBuilder().setAckReply(AckReply.newBuilder().setTag(tag).setOk(false)
                .setCode(Status.Code.INVALID_ARGUMENT.value()).setError(StatusMapper.bounded(why))).build());
    }

    @Override
    public void deliveriesAvailable() {
        if (consumer != null && !ended && drainScheduled.compareAndSet(false, true)) {
            writer.execute(this::drain);
        }
    }

    private void drain() {
        drainScheduled.set(false);
        Consumer c = consumer;
        synchronized (out) {
            while (!ended && out.isReady()) {
                List<io.hourglass.api.v1.Delivery> frame = nextFrame(c);
                if (frame.isEmpty()) {
                    return;
                }
                metrics.recordDeliveryFrame();
                out.onNext(frame.size() == 1
                        ? SubscribeResponse.newBuilder().setDelivery(frame.get(0)).build()
                        : SubscribeResponse.newBuilder().setDeliveries(
                                io.hourglass.api.v1.Deliveries.newBuilder().addAllDelivery(frame)).build());
            }
        }
    }

    /**
     * The deliveries of the next frame, each counted in the delivery metrics: up to
     * {@link #maxBatch} of those waiting, and {@link #BATCH_BYTES} unless the first alone is larger.
     * Caller holds {@code out}.
     */
    private List<io.hourglass.api.v1.Delivery> nextFrame(Consumer c) {
        List<io.hourglass.api.v1.Delivery> frame = new ArrayList<>(1);
        int bytes = 0;
        while (frame.size() < maxBatch) {
            io.hourglass.api.v1.Delivery next = carry;
            carry = null;
            if (next == null) {
                Delivery d = c.poll();
                if (d == null) {
                    break;
                }
                next = toProto(d);
            }
            bytes += next.getSerializedSize();
            if (!frame.isEmpty() && bytes > BATCH_BYTES) {
                carry = next;
                break;
            }
            metrics.recordDelivery(next.getTopic(), next.getEnqueuedAtMs(), next.getDueAtMs(), next.getDeliveredAtMs());
            frame.add(next);
        }
        return frame;
    }

    static io.hourglass.api.v1.Delivery toProto(Delivery d) {
        var m = d.message();
        return io.hourglass.api.v1.Delivery.newBuilder()
                .setTag(ByteString.copyFrom(d.tag().toBytes())).setId(d.tag().toHex())
                .setTopic(m.getTopic()).setPayload(m.getPayload()).putAllHeaders(m.getHeadersMap())
                .setEnqueuedAtMs(m.getEnqueuedAtMs()).setDueAtMs(m.getDueAtMs())
                .setAttempt(d.attempt()).setDeliveredAtMs(d.deliveredAtMs()).build();
    }

    @Override
    public void closed(String reason) {
        fail(Status.UNAVAILABLE.withDescription(reason));
    }

    private void write(SubscribeResponse frame) {
        synchronized (out) {
            if (!ended) {
                out.onNext(frame);
            }
        }
    }

    private void fail(Status status) {
        fail(status.asRuntimeException());
    }

    private void fail(io.grpc.StatusRuntimeException error) {
        synchronized (out) {
            if (ended) {
                return;
            }
            ended = true;
            out.onError(error);
        }
        release();
    }

    private void release() {
        ended = true;
        initDeadline.cancel();
        Consumer c = consumer;
        if (c != null) {
            engine.disconnect(c);
        }
        giveBackSlot();
    }

    private void giveBackSlot() {
        if (holdsSlot.compareAndSet(true, false)) {
            limits.releaseConsumer();
        }
    }

    @Override
    public void onError(Throwable t) {
        LOG.debug("subscribe stream ended by the client: {}", t.toString());
        release();
    }

    @Override
    public void onCompleted() {
        synchronized (out) {
            if (!ended) {
                ended = true;
                out.onCompleted();
            }
        }
        release();
    }
}
