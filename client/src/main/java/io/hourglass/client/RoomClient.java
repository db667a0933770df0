package io.hourglass.client;

import com.google.protobuf.ByteString;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomMetricsRequest;
import io.hourglass.api.v1.RoomPeekRequest;
import io.hourglass.api.v1.RoomSendRequest;
import io.hourglass.api.v1.RoomStateRequest;
import io.hourglass.api.v1.RoomsGrpc;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Lock-step rooms (ROOMS.md): send to rooms, inspect them, and open sessions that join them.
 * Obtained from {@link HourglassClient#rooms()} and closed with it.
 *
 * <p>Every message sent to a room goes to all its subscribers in priority order (lower first,
 * then FIFO), and the next one is released only when every SYNC subscriber has acked the last;
 * out-of-band messages bypass the gate. Rooms are created implicitly.
 *
 * <p>Unary calls stick to the client's current server and are retried on {@code UNAVAILABLE}
 * with backoff until the client's {@link RetryPolicy} deadline, following a follower's
 * {@code hourglass-leader} hint; other statuses are not retried. Each {@link #send} carries an
 * idempotency key kept across its retries, so a retry after a lost answer returns the first
 * message's id instead of enqueueing it twice.
 *
 * <p>Thread-safe. Synchronous methods throw, and asynchronous ones complete their futures with,
 * {@link HourglassClientException} subtypes: {@link InvalidRequestException} (the server refused
 * the request — an invalid room name, an ack timeout under 1 s), {@link UnavailableException}
 * (no server answered before the deadline), or the base type (server error, closed client).
 * Invalid arguments detected locally throw {@link IllegalArgumentException}.
 */
public final class RoomClient {
    private final ServerPool pool;
    private final UnaryCaller<RoomsGrpc.RoomsStub> caller;
    private final ScheduledExecutorService timer;
    private final Set<RoomSession> sessions = ConcurrentHashMap.newKeySet();
    private final AtomicInteger sessionCount = new AtomicInteger();
    private volatile boolean closed;

    private final ShardMap shardMap;

    /** @param shardMap the cluster's shards as the client learns them (sessions open a stream per shard), or null */
    RoomClient(ServerPool pool, UnaryCaller<RoomsGrpc.RoomsStub> caller, ScheduledExecutorService timer,
               ShardMap shardMap) {
        this.pool = pool;
        this.caller = caller;
        this.timer = timer;
        this.shardMap = shardMap;
    }

    /**
     * Enqueues a message in {@code room} and returns its id once committed.
     *
     * @param priority lower is released first; negatives allowed
     */
    public String send(String room, byte[] payload, int priority) {
        return await(sendAsync(room, payload, priority));
    }

    /** {@link #send(String, byte[], int)} with a UTF-8 payload. */
    public String send(String room, String payload, int priority) {
        return send(room, payload.getBytes(StandardCharsets.UTF_8), priority);
    }

    /** {@link #send(String, byte[], int)} without waiting; the future completes with the id. */
    public CompletableFuture<String> sendAsync(String room, byte[] payload, int priority) {
        return sendAsync(room, payload, priority, "");
    }

    String send(String room, byte[] payload, int priority, String clientId) {
        return await(sendAsync(room, payload, priority, clientId));
    }

    private CompletableFuture<String> sendAsync(String room, byte[] payload, int priority,
                                                String clientId) {
        // One idempotency key per send, kept across its retries: a retry after a lost answer gets the
        // first message's id back instead of enqueueing the message twice.
        RoomSendRequest request = sendRequest(room, payload).setPriority(priority)
                .setClientId(clientId).setProducerId(ProducerIds.next()).build();
        return caller.call("send to room '" + room + "'", request,
                        RoomsGrpc.RoomsStub::send)
                .thenApply(r -> r.getMessageId());
    }

    /**
     * Delivers a message at once to every current subscriber of {@code room}, SYNC and ASYNC,
     * without an ack handle: never stored, never gated, dropped when the room has no subscribers.
     */
    public OutOfBandResult sendOutOfBand(String room, byte[] payload) {
        RoomSendRequest request = sendRequest(room, payload).build();
        return await(caller.call("out-of-band send to room '" + room + "'", request,
                RoomsGrpc.RoomsStub::sendOutOfBand)
                .thenApply(r -> new OutOfBandResult(r.getMessageId(), r.getRecipients())));
    }

    /** {@link #sendOutOfBand(String, byte[])} with a UTF-8 payload. */
    public OutOfBandResult sendOutOfBand(String room, String payload) {
        return sendOutOfBand(room, payload.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The pending messages of {@code room} in release order, the in-flight one excluded, skipping
     * {@code offset} and returning at most {@code limit}.
     *
     * @param limit 1 or more; the server caps it
     */
    public List<QueuedRoomMessage> peek(String room, int offset, int limit) {
        requireRoom(room);
        if (offset < 0) {
            throw new IllegalArgumentException("offset must not be negative: " + offset);
        }
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be at least 1: " + limit);
        }
        RoomPeekRequest request = RoomPeekRequest.newBuilder().setRoom(room).setOffset(offset)
                .setLimit(limit).build();
        return await(caller.call("peek of room '" + room + "'", request,
                RoomsGrpc.RoomsStub::peek)
                .thenApply(r -> r.getMessagesList().stream().map(RoomCodec::fromProto).toList()));
    }

    /** The state of {@code room}: backlog, SYNC members, listeners, the in-flight message. */
    public RoomStatus state(String room) {
        requireRoom(room);
        RoomStateRequest request = RoomStateRequest.newBuilder().setRoom(room).build();
        return await(caller.call("state of room '" + room + "'", request,
                RoomsGrpc.RoomsStub::state)
                .thenApply(RoomCodec::fromProto));
    }

    /** The rooms the leader knows (members, listeners or a backlog), by name: at most {@code limit} from {@code offset}. */
    public List<RoomStatus> list(int offset, int limit) {
        if (offset < 0 || limit < 1) {
            throw new IllegalArgumentException("offset must not be negative and limit at least 1: " + offset + ", " + limit);
        }
        io.hourglass.api.v1.RoomListRequest request = io.hourglass.api.v1.RoomListRequest.newBuilder()
                .setOffset(offset).setLimit(limit).build();
        return await(caller.call("room list", request, RoomsGrpc.RoomsStub::list)
                .thenApply(r -> r.getRoomsList().stream().map(RoomCodec::fromProto).toList()));
    }

    /** How many rooms have a backlog, and the {@code topN} largest (1 or more). */
    public RoomMetrics metrics(int topN) {
        if (topN < 1) {
            throw new IllegalArgumentException("topN must be at least 1: " + topN);
        }
        RoomMetricsRequest request = RoomMetricsRequest.newBuilder().setTopN(topN).build();
        return await(caller.call("room metrics", request,
                RoomsGrpc.RoomsStub::metrics)
                .thenApply(RoomCodec::fromProto));
    }

    /**
     * Sets the delivery guarantee of {@code room} (replicated).
     *
     * @param atLeastOnce keep the in-flight message in the replicated state until every SYNC
     *     member acked it, so that a failover redelivers it (default: at most once)
     * @param ackTimeout evict a SYNC member that has not acked the in-flight message within this
     *     long; {@link Duration#ZERO} or null = never (default); else at least 1 s
     * @throws IllegalArgumentException if the room is blank or the ack timeout under 1 s
     */
    public void configure(String room, boolean atLeastOnce, Duration ackTimeout) {
        requireRoom(room);
        Duration timeout = ackTimeout == null ? Duration.ZERO : ackTimeout;
        if (timeout.isNegative() || (!timeout.isZero() && timeout.compareTo(Duration.ofSeconds(1)) < 0)) {
            throw new IllegalArgumentException("ackTimeout must be 0 (none) or at least 1s, got "
                    + timeout.toMillis() + "ms");
        }
        RoomConfigureRequest request = RoomConfigureRequest.newBuilder().setRoom(room)
                .setAtLeastOnce(atLeastOnce).setAckTimeoutMs(timeout.toMillis()).build();
        await(caller.call("configure of room '" + room + "'", request,
                RoomsGrpc.RoomsStub::configure));
    }

    /**
     * Opens a session. Returns at once; the stream opens in the background
     * ({@link RoomSession#opened()}), and subscriptions made meanwhile are sent when it does.
     *
     * @throws HourglassClientException if the client is closed
     */
    public RoomSession openSession(RoomSessionOptions options) {
        Objects.requireNonNull(options, "options");
        if (closed) {
            throw new HourglassClientException("client is closed");
        }
        RoomSession session = new RoomSession(options, pool, timer, this,
                "hourglass-room-session-" + sessionCount.incrementAndGet(), sessions::remove, shardMap);
        sessions.add(session);
        session.start();
        return session;
    }

    /** Closes every session and refuses new calls; called by {@link HourglassClient#close()}. */
    void close() {
        closed = true;
        for (RoomSession session : new ArrayList<>(sessions)) {
            session.close();
        }
        caller.close();
        caller.failPending(new HourglassClientException("client is closed"));
    }

    static void requireRoom(String room) {
        if (room == null || room.isBlank()) {
            throw new IllegalArgumentException("room must not be empty");
        }
    }

    private static RoomSendRequest.Builder sendRequest(String room, byte[] payload) {
        requireRoom(room);
        Objects.requireNonNull(payload, "payload");
        return RoomSendRequest.newBuilder().setRoom(room).setPayload(ByteString.copyFrom(payload));
    }

    private static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HourglassClientException("interrupted while waiting for the server", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof HourglassClientException h) {
                throw h;
            }
            throw new HourglassClientException(String.valueOf(cause.getMessage()), cause);
        }
    }
}
