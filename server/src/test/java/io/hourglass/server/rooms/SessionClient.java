package io.hourglass.server.rooms;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.RoomAck;
import io.hourglass.api.v1.RoomDelivery;
import io.hourglass.api.v1.RoomEjected;
import io.hourglass.api.v1.RoomPing;
import io.hourglass.api.v1.RoomSubscribe;
import io.hourglass.api.v1.RoomUnsubscribe;
import io.hourglass.api.v1.RoomsGrpc;
import io.hourglass.api.v1.SessionOpen;
import io.hourglass.api.v1.SessionReply;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionResponse;
import io.hourglass.api.v1.SubscriptionMode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * One raw {@code Rooms.Session} stream, as a client library would drive it, frame by frame: what
 * the server wrote (in order, with the local receive time of each delivery), and blocking request
 * helpers that wait for their reply. An auto-acking client acks every ackable delivery as it arrives.
 *
 * <p>Thread-safety: requests may be sent from any thread (the request stream is written under this
 * object's monitor); received frames are kept in concurrent lists.
 */
final class SessionClient implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(20);

    /** A delivery and when it reached this client ({@link System#nanoTime()}). */
    record Received(RoomDelivery delivery, long atNanos) {
    }

    final String name;
    private final StreamObserver<SessionRequest> requests;
    private final List<SessionResponse> frames = new CopyOnWriteArrayList<>();
    private final List<Received> deliveries = new CopyOnWriteArrayList<>();
    private final Map<Long, CompletableFuture<SessionReply>> replies = new ConcurrentHashMap<>();
    private final AtomicLong requestIds = new AtomicLong();
    private volatile boolean autoAck;
    private volatile String clientId;
    private volatile Throwable error;
    private volatile boolean completed;
    private volatile ScheduledFuture<?> pinger;

    private SessionClient(Channel channel, String name) {
        this.name = name;
        this.requests = RoomsGrpc.newStub(channel).session(new StreamObserver<>() {
            @Override
            public void onNext(SessionResponse frame) {
                received(frame);
            }

            @Override
            public void onError(Throwable t) {
                error = t;
                replies.values().forEach(f -> f.completeExceptionally(t));
            }

            @Override
            public void onCompleted() {
                completed = true;
            }
        });
    }

    /** Opens a session with the given heartbeat timeout (0: the server's) and waits for {@code opened}. */
    static SessionClient open(Channel channel, String name, long clientTimeoutMs) {
        SessionClient c = start(channel, name);
        c.send(SessionRequest.newBuilder().setOpen(SessionOpen.newBuilder().setClientTimeoutMs(clientTimeoutMs)));
        await(name + " opened").atMost(WAIT).until(() -> c.clientId != null || c.error != null);
        assertTrue(c.clientId != null, () -> name + " was not opened: " + c.error);
        return c;
    }

    /** Opens a session with the server's default heartbeat timeout. */
    static SessionClient open(Channel channel, String name) {
        return open(channel, name, 0);
    }

    /** A stream on which nothing was sent yet (protocol tests send their own first frame). */
    static SessionClient start(Channel channel, String name) {
        return new SessionClient(channel, name);
    }

    SessionClient autoAck() {
        autoAck = true;
        return this;
    }

    private void received(SessionResponse frame) {
        frames.add(frame);
        switch (frame.getEventCase()) {
            case OPENED -> clientId = frame.getOpened().getClientId();
            case DELIVERY -> {
                RoomDelivery d = frame.getDelivery();
                deliveries.add(new Received(d, System.nanoTime()));
                if (autoAck && d.getAckable()) {
                    send(SessionRequest.newBuilder().setAck(RoomAck.newBuilder().setRoom(d.getRoom())
                            .setMessageId(d.getMessageId())));
                }
            }
            case REPLY -> {
                CompletableFuture<SessionReply> f = replies.remove(frame.getReply().getRequestId());
                if (f != null) {
                    f.complete(frame.getReply());
                }
            }
            default -> {
            }
        }
    }

    /** Sends a frame with a fresh request id; returns the future of its reply. */
    synchronized CompletableFuture<SessionReply> send(SessionRequest.Builder frame) {
        long id = requestIds.incrementAndGet();
        CompletableFuture<SessionReply> reply = new CompletableFuture<>();
        replies.put(id, reply);
        requests.onNext(frame.setRequestId(id).build());
        return reply;
    }

    /** Sends a frame and waits for its reply. */
    SessionReply request(SessionRequest.Builder frame) {
        return send(frame).orTimeout(WAIT.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    SessionReply subscribe(String room, SubscriptionMode mode) {
        return subscribe(room, mode, "");
    }

    SessionReply subscribe(String room, SubscriptionMode mode, String heldMessageId) {
        return request(SessionRequest.newBuilder().setSubscribe(RoomSubscribe.newBuilder().setRoom(room).setMode(mode)
                .setHeldMessageId(heldMessageId)));
    }

    /** Subscribes and checks that it took. */
    SessionClient join(String room, SubscriptionMode mode) {
        SessionReply r = subscribe(room, mode);
        assertEquals("SUBSCRIBED", r.getOutcome(), () -> name + " subscribing to " + room + ": " + r);
        return this;
    }

    SessionReply unsubscribe(String room) {
        return request(SessionRequest.newBuilder().setUnsubscribe(RoomUnsubscribe.newBuilder().setRoom(room)));
    }

    SessionReply ack(String room, String messageId) {
        return request(SessionRequest.newBuilder().setAck(RoomAck.newBuilder().setRoom(room).setMessageId(messageId)));
    }

    /** Acks the last delivery received and checks the ack counted. */
    SessionReply ackLast() {
        RoomDelivery d = last();
        SessionReply r = ack(d.getRoom(), d.getMessageId());
        assertEquals("ACKED", r.getOutcome(), () -> name + " acking " + d.getPayload().toStringUtf8() + ": " + r);
        return r;
    }

    /**
     * A ping, answered after everything the server produced for this client before it: when it
     * returns, every delivery that was already on its way has been received.
     */
    SessionReply ping() {
        return request(SessionRequest.newBuilder().setPing(RoomPing.getDefaultInstance()));
    }

    /** Pings every {@code period} on {@code scheduler} (fire and forget) until {@link #stopPinging()}. */
    void startPinging(ScheduledExecutorService scheduler, Duration period) {
        pinger = scheduler.scheduleAtFixedRate(() -> {
            if (!ended()) {
                send(SessionRequest.newBuilder().setPing(RoomPing.getDefaultInstance()));
            }
        }, 0, period.toMillis(), TimeUnit.MILLISECONDS);
    }

    void stopPinging() {
        ScheduledFuture<?> p = pinger;
        if (p != null) {
            p.cancel(false);
        }
    }

    String clientId() {
        return clientId;
    }

    List<SessionResponse> frames() {
        return List.copyOf(frames);
    }

    List<Received> received() {
        return List.copyOf(deliveries);
    }

    List<RoomDelivery> deliveries() {
        return deliveries.stream().map(Received::delivery).toList();
    }

    List<String> payloads() {
        return deliveries.stream().map(r -> r.delivery().getPayload().toStringUtf8()).toList();
    }

    List<String> payloads(String room) {
        return deliveries.stream().map(Received::delivery).filter(d -> d.getRoom().equals(room))
                .map(d -> d.getPayload().toStringUtf8()).toList();
    }

    RoomDelivery last() {
        assertTrue(!deliveries.isEmpty(), () -> name + " received nothing");
        return deliveries.get(deliveries.size() - 1).delivery();
    }

    /** Waits until exactly these payloads have arrived (all rooms), and no others. */
    void awaitPayloads(String... expected) {
        await(name + " receives " + List.of(expected)).atMost(WAIT)
                .until(() -> deliveries.size() >= expected.length || error != null);
        assertEquals(List.of(expected), payloads(), () -> name + " (stream error: " + error + ")");
    }

    RoomDelivery awaitDelivery(String payload) {
        Predicate<RoomDelivery> matching = d -> d.getPayload().toStringUtf8().equals(payload);
        await(name + " receives " + payload).atMost(WAIT)
                .until(() -> deliveries().stream().anyMatch(matching) || error != null);
        return deliveries().stream().filter(matching).findFirst()
                .orElseThrow(() -> new AssertionError(name + ": stream failed instead: " + error));
    }

    List<RoomEjected> ejections() {
        return frames.stream().filter(SessionResponse::hasEjected).map(SessionResponse::getEjected).toList();
    }

    RoomEjected awaitEjected(String room) {
        await(name + " is ejected from " + room).atMost(WAIT)
                .until(() -> ejections().stream().anyMatch(e -> e.getRoom().equals(room)) || ended());
        return ejections().stream().filter(e -> e.getRoom().equals(room)).findFirst()
                .orElseThrow(() -> new AssertionError(name + ": stream ended instead: " + error));
    }

    /** Waits until the server ends the stream; its status (OK when completed). */
    Status awaitEnd(Duration atMost) {
        await(name + "'s stream ends").atMost(atMost).until(this::ended);
        return error == null ? Status.OK : Status.fromThrowable(error);
    }

    Status awaitEnd() {
        return awaitEnd(WAIT);
    }

    Throwable error() {
        return error;
    }

    /** The trailers the stream ended with (the {@code hourglass-leader} hint, ...); empty while open. */
    Metadata trailers() {
        Metadata m = error == null ? null : Status.trailersFromThrowable(error);
        return m == null ? new Metadata() : m;
    }

    boolean ended() {
        return error != null || completed;
    }

    /** Half-closes the request stream (an orderly goodbye); the server ends the session. */
    @Override
    public void close() {
        stopPinging();
        synchronized (this) {
            if (!ended()) {
                try {
                    requests.onCompleted();
                } catch (IllegalStateException e) {
                    // already half-closed
                }
            }
        }
    }

    /** Cancels the call, as a client that goes away without a goodbye. */
    void cancel() {
        stopPinging();
        synchronized (this) {
            requests.onError(Status.CANCELLED.withDescription("test client went away").asRuntimeException());
        }
    }

    @Override
    public String toString() {
        return name + "(" + clientId + ")";
    }
}
