package io.hourglass.client;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.hourglass.api.v1.Ack;
import io.hourglass.api.v1.AckReply;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.Nack;
import io.hourglass.api.v1.SubscribeInit;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.api.v1.SubscribeResponse;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code Subscribe} call: sends {@code init}, ACKs and NACKs; receives {@code subscribed},
 * deliveries and ACK replies. A reconnect creates a new instance; an instance never outlives its
 * call, which is what keeps an ACK from reaching a stream that did not carry the delivery.
 *
 * <p>Flow control: gRPC hands the client one inbound frame per credit ({@code request(n)}), and
 * frames come in the order the server wrote them. Normally the stream keeps
 * {@code maxBuffered − unhandled} credits out, where {@code unhandled} counts deliveries the
 * handler has not finished ({@link #deliveryDone()}), so at most {@code maxBuffered} deliveries
 * wait in the client and the rest wait on the server (its writes stop when gRPC says the client
 * is not ready). A stream with room for 16 or more asks the server for frames of up to
 * {@link #batchFor an eighth of it} when several deliveries are ready at once (one frame, one
 * callback for many); a credit then stands for a whole frame, and the stream keeps
 * {@code (maxBuffered − unhandled) / batch} of them out.
 *
 * <p>Confirmed ACKs and that rule would deadlock: a handler blocked on
 * {@link DeliveryContext#ackConfirmed()} holds its delivery, the buffer fills, and the
 * {@code AckReply} it waits for sits in the transport <em>behind</em> deliveries nobody reads.
 * Granting one extra credit per confirm ACK is not enough — the server may have written any
 * number of deliveries (up to the HTTP/2 window) before the reply. So while at least one
 * confirmation is outstanding the stream always keeps a credit out, whatever the buffer holds:
 * every frame ahead of the reply is read (deliveries are queued for the handler past
 * {@code maxBuffered}) and the reply is processed on the gRPC thread, never through the handler
 * queue. The read-ahead stops as soon as no confirmation is outstanding; it is bounded by what the
 * server sends during one confirmation round trip.
 *
 * <p>Thread-safety: outbound frames, the confirm table and the credit counters are guarded by
 * {@code lock} (a gRPC call must not be written concurrently); inbound callbacks come serially
 * from gRPC; {@code request} is called outside {@code lock}.
 */
final class ConsumerStream implements ClientResponseObserver<SubscribeRequest, SubscribeResponse>, StallWatch.Watched {
    /** Trailer in which a follower names the leader when it refuses a subscription. */
    static final io.grpc.Metadata.Key<String> LEADER_KEY =
            io.grpc.Metadata.Key.of("hourglass-leader", io.grpc.Metadata.ASCII_STRING_MARSHALLER);
    private volatile String leaderHint;

    private static final Logger LOG = LoggerFactory.getLogger(ConsumerStream.class);

    /** What the stream reports to its {@link Subscription}. */
    interface Listener {
        void onSubscribed(ConsumerStream stream, String consumerId);

        void onDelivery(ConsumerStream stream, ReceivedMessage message);

        /** The call ended: {@code Status.OK} if the server completed it. Called once. */
        void onEnded(ConsumerStream stream, Status status);
    }

    private final ServerPool.Endpoint endpoint;
    private final int maxBuffered;
    private final Listener listener;
    private final CompletableFuture<Status> ended = new CompletableFuture<>();
    private final long sinceNanos = System.nanoTime();
    /** Set when the server stopped answering ({@link StallWatch}): the stream ends as UNAVAILABLE then. */
    private volatile boolean stalled;

    private final Object lock = new Object();
    // Guarded by lock.
    private ClientCallStreamObserver<SubscribeRequest> call;
    private boolean open = true;
    private final Map<ByteString, Deque<CompletableFuture<Void>>> confirms = new HashMap<>();
    /** Credits granted to gRPC and not yet used by an inbound frame. */
    private int granted;
    /** Deliveries received whose handler call has not finished. */
    private int unhandled;
    /** Confirmed ACKs sent and not yet answered (the sum of the {@code confirms} queues). */
    private int confirmsPending;
    /** Plain ACKs the handler thread made, not sent yet: they go out as one frame (see {@link #flushAcks()}). */
    private final List<ByteString> pendingAcks = new ArrayList<>();
    /** Whether the calling thread is the subscription's handler thread, whose idle moment flushes ACKs. */
    private final java.util.function.BooleanSupplier onHandlerThread;
    /** Credits are granted in steps of this many (at least one, and at once when none is out). */
    private final int creditStep;
    /**
     * Most deliveries per frame asked of the server ({@code init.max_batch}): an eighth of
     * {@code maxBuffered} from 16 on, else 1. With batches a credit is a frame of up to this many,
     * so the stream keeps {@code (maxBuffered − unhandled) / batch} credits out and the buffer bound
     * holds.
     */
    private final int batch;

    /** Plain ACKs buffered before a frame goes out whether or not the handler is idle. */
    static final int ACK_BATCH_MAX = 256;

    ConsumerStream(ServerPool.Endpoint endpoint, int maxBuffered, Listener listener) {
        this(endpoint, maxBuffered, listener, () -> false);
    }

    ConsumerStream(ServerPool.Endpoint endpoint, int maxBuffered, Listener listener,
                   java.util.function.BooleanSupplier onHandlerThread) {
        this.endpoint = endpoint;
        this.maxBuffered = maxBuffered;
        this.listener = listener;
        this.onHandlerThread = onHandlerThread;
        this.batch = batchFor(maxBuffered);
        this.creditStep = batch > 1 ? 1 : Math.max(1, maxBuffered / 8);
    }

    /** The {@code max_batch} a stream buffering {@code maxBuffered} deliveries asks for. */
    static int batchFor(int maxBuffered) {
        return maxBuffered >= 16 ? Math.min(maxBuffered / 8, 256) : 1;
    }

    /** Credits (frames) that fill a buffer of {@code room} deliveries. */
    private int creditsFor(int room) {
        return batch > 1 ? room / batch : room;
    }

    /** Opens the call and sends {@code init}, with {@link SubscribeOptions#maxUnacked()}. */
    void start(String topic, String group, int maxUnacked) {
        BrokerGrpc.newStub(endpoint.channel()).subscribe(this);
        send(SubscribeRequest.newBuilder()
                .setInit(SubscribeInit.newBuilder().setTopic(topic).setGroup(group).setMaxBatch(batch)
                        .setMaxUnacked(maxUnacked))
                .build());
    }

    @Override
    public ServerPool.Endpoint endpoint() {
        return endpoint;
    }

    @Override
    public long sinceNanos() {
        return sinceNanos;
    }

    /** Whether this stream ended because its server stopped answering. */
    boolean stalledOut() {
        return stalled;
    }

    /** The server stopped answering while the connection stays open: end the stream, so that it reconnects elsewhere. */
    @Override
    public void stalled() {
        stalled = true;
        cancel("server " + endpoint.address() + " stopped answering");
    }

    /** Whether ACKs can still be sent: the call is neither ended nor half-closed. */
    boolean isOpen() {
        synchronized (lock) {
            return open;
        }
    }

    /** Completes with the final status when the call has ended. */
    CompletableFuture<Status> ended() {
        return ended;
    }

    DeliveryContext contextFor(ReceivedMessage message) {
        return new Context(ByteString.copyFrom(message.tag()), message.id());
    }

    /**
     * The handler is done with one delivery: let the server send one more. Harmless on an
     * ended call. May be called from any thread.
     */
    void deliveryDone() {
        synchronized (lock) {
            unhandled--;
        }
        topUp();
    }

    /**
     * Grants gRPC the credits the rule in the class comment asks for: enough to fill the buffer,
     * and at least one while a confirmation is outstanding.
     */
    private void topUp() {
        ClientCallStreamObserver<SubscribeRequest> c;
        int more;
        synchronized (lock) {
            int target = Math.max(creditsFor(maxBuffered - unhandled), confirmsPending > 0 ? 1 : 0);
            more = target - granted;
            // In steps, not one request per handled delivery; at once when no credit is out, so
            // that a confirmation's reply can always arrive (class comment).
            if (more <= 0 || call == null || (more < creditStep && granted > 0)) {
                return;
            }
            granted = target;
            c = call;
        }
        c.request(more);
    }

    /** Ends our side; the server answers by completing the call. */
    void halfClose() {
        synchronized (lock) {
            if (open) {
                flushAcksLocked();
                open = false;
                call.onCompleted();
            }
        }
    }

    void cancel(String reason) {
        ClientCallStreamObserver<SubscribeRequest> c;
        synchronized (lock) {
            open = false;
            c = call;
        }
        c.cancel(reason, null);
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<SubscribeRequest> requestStream) {
        int initial = creditsFor(maxBuffered);
        requestStream.disableAutoRequestWithInitial(initial);
        synchronized (lock) {
            this.call = requestStream;
            this.granted = initial;
        }
    }

    @Override
    public void onNext(SubscribeResponse response) {
        int deliveries = switch (response.getFrameCase()) {
            case DELIVERY -> 1;
            case DELIVERIES -> response.getDeliveries().getDeliveryCount();
            default -> 0;
        };
        synchronized (lock) {
            granted--;
            unhandled += deliveries; // their credit comes back through deliveryDone()
        }
        switch (response.getFrameCase()) {
            case DELIVERY -> listener.onDelivery(this, ProtoCodec.fromProto(response.getDelivery()));
            case DELIVERIES -> response.getDeliveries().getDeliveryList()
                    .forEach(d -> listener.onDelivery(this, ProtoCodec.fromProto(d)));
            case SUBSCRIBED -> listener.onSubscribed(this, response.getSubscribed().getConsumerId());
            case ACK_REPLY -> onAckReply(response.getAckReply());
            default -> LOG.debug("ignoring unknown frame from {}", endpoint.address());
        }
        topUp();
    }

    @Override
    public void onError(Throwable t) {
        io.grpc.Metadata trailers = Status.trailersFromThrowable(t);
        if (trailers != null) {
            leaderHint = trailers.get(LEADER_KEY);
        }
        end(Status.fromThrowable(t));
    }

    /** The leader a refusing follower named in its trailers, or null. */
    String leaderHint() {
        return leaderHint;
    }

    @Override
    public void onCompleted() {
        end(Status.OK);
    }

    private void end(Status ending) {
        Status status = stalled
                ? Status.UNAVAILABLE.withDescription("server " + endpoint.address() + " stopped answering")
                : ending;
        List<CompletableFuture<Void>> orphans = new ArrayList<>();
        synchronized (lock) {
            open = false;
            confirms.values().forEach(orphans::addAll);
            confirms.clear();
            confirmsPending = 0;
        }
        UnavailableException e = new UnavailableException(
                "stream ended before the ACK was confirmed: " + StatusMapping.describe(status),
                status.getDescription(), null);
        orphans.forEach(f -> f.completeExceptionally(e));
        ended.complete(status);
        listener.onEnded(this, status);
    }

    private void onAckReply(AckReply reply) {
        CompletableFuture<Void> waiter;
        synchronized (lock) {
            Deque<CompletableFuture<Void>> waiters = confirms.get(reply.getTag());
            waiter = waiters == null ? null : waiters.poll();
            if (waiter != null) {
                confirmsPending--;
            }
            if (waiters != null && waiters.isEmpty()) {
                confirms.remove(reply.getTag());
            }
        }
        String id = HexFormat.of().formatHex(reply.getTag().toByteArray());
        if (reply.getOk()) {
            if (waiter != null) {
                waiter.complete(null);
            }
            return;
        }
        HourglassClientException e = StatusMapping.fromAckReply(reply.getCode(), reply.getError());
        if (waiter != null) {
            waiter.completeExceptionally(e);
        } else {
            LOG.warn("server refused ACK/NACK of {}: {}", id, e.getMessage());
        }
    }

    /**
     * Sends the plain ACKs buffered by the handler thread as one frame. The handler loop calls it
     * when no further delivery of this stream is waiting, so a lone delivery's ACK leaves at once.
     */
    void flushAcks() {
        synchronized (lock) {
            flushAcksLocked();
        }
    }

    private void flushAcksLocked() {
        if (pendingAcks.isEmpty()) {
            return;
        }
        Ack.Builder ack = Ack.newBuilder().setTag(pendingAcks.get(0));
        ack.addAllMoreTags(pendingAcks.subList(1, pendingAcks.size()));
        pendingAcks.clear();
        if (!sendLocked(SubscribeRequest.newBuilder().setAck(ack).build())) {
            LOG.debug("ACKs dropped: the stream to {} has ended", endpoint.address());
        }
    }

    /** A plain ACK: buffered when made on the handler thread, otherwise sent at once. */
    private boolean ackPlain(ByteString tag) {
        synchronized (lock) {
            if (!open) {
                return false;
            }
            if (!onHandlerThread.getAsBoolean()) {
                return sendLocked(SubscribeRequest.newBuilder().setAck(Ack.newBuilder().setTag(tag)).build());
            }
            pendingAcks.add(tag);
            if (pendingAcks.size() > ACK_BATCH_MAX) {
                flushAcksLocked();
            }
            return true;
        }
    }

    /** Sends a frame if the call is open; returns whether it was sent. */
    private boolean send(SubscribeRequest request) {
        synchronized (lock) {
            flushAcksLocked(); // keep ACKs in the order they were made
            return sendLocked(request);
        }
    }

    /** Under {@code lock}. */
    private boolean sendLocked(SubscribeRequest request) {
        if (!open) {
            return false;
        }
        try {
            call.onNext(request);
            return true;
        } catch (RuntimeException e) {
            LOG.debug("could not send on stream to {}: {}", endpoint.address(), e.toString());
            return false;
        }
    }

    private final class Context implements DeliveryContext {
        private final ByteString tag;
        private final String id;
        private final AtomicBoolean settled = new AtomicBoolean();

        Context(ByteString tag, String id) {
            this.tag = tag;
            this.id = id;
        }

        @Override
        public void ack() {
            if (settled.compareAndSet(false, true) && !ackPlain(tag)) {
                LOG.debug("ACK of {} dropped: its stream has ended", id);
            }
        }

        @Override
        public CompletableFuture<Void> ackConfirmed() {
            if (!settled.compareAndSet(false, true)) {
                return CompletableFuture.failedFuture(
                        new IllegalStateException("delivery " + id + " was already settled"));
            }
            CompletableFuture<Void> confirmed = new CompletableFuture<>();
            boolean sent;
            synchronized (lock) {
                // Registered before sending: the reply may be processed inline, within send().
                Deque<CompletableFuture<Void>> waiters =
                        confirms.computeIfAbsent(tag, t -> new ArrayDeque<>());
                waiters.add(confirmed);
                confirmsPending++;
                sent = send(ackFrame(true));
                if (!sent) {
                    if (waiters.remove(confirmed)) {
                        confirmsPending--;
                    }
                    if (waiters.isEmpty()) {
                        confirms.remove(tag);
                    }
                }
            }
            if (!sent) {
                confirmed.completeExceptionally(new StaleDeliveryException("ACK of " + id
                        + " not sent: its stream has ended; it will be redelivered"));
                return confirmed;
            }
            topUp(); // keep reading while the reply is outstanding, whatever the buffer holds
            return confirmed;
        }

        @Override
        public void nack() {
            nack(java.time.Duration.ZERO);
        }

        @Override
        public void nack(java.time.Duration delay) {
            if (delay.isNegative()) {
                throw new IllegalArgumentException("a NACK delay must not be negative: " + delay);
            }
            if (settled.compareAndSet(false, true) && !send(SubscribeRequest.newBuilder()
                    .setNack(Nack.newBuilder().setTag(tag).setDelayMs(delay.toMillis())).build())) {
                LOG.debug("NACK of {} dropped: its stream has ended", id);
            }
        }

        boolean isSettled() {
            return settled.get();
        }

        private SubscribeRequest ackFrame(boolean confirm) {
            return SubscribeRequest.newBuilder()
                    .setAck(Ack.newBuilder().setTag(tag).setConfirm(confirm))
                    .build();
        }
    }

    /** Whether the handler already ACKed or NACKed the delivery behind {@code context}. */
    static boolean isSettled(DeliveryContext context) {
        return context instanceof Context c && c.isSettled();
    }
}
