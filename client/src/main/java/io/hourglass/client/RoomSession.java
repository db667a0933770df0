package io.hourglass.client;

import io.hourglass.client.RoomMemberships.Kind;
import io.hourglass.client.RoomMemberships.Request;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;

/**
 * A client's session with the rooms of a cluster: its subscriptions, acks and pings over one
 * {@code Rooms.Session} stream at a time. Open it with {@link RoomClient#openSession}.
 *
 * <p>Lifecycle: {@code CONNECTING → OPEN → (stream fails) → waiting → CONNECTING → …} until
 * {@link #close()}, a refusal that retrying cannot fix ({@link InvalidRequestException}), or
 * {@link RoomSessionOptions#giveUpAfter()} without a working stream
 * ({@link UnavailableException}); {@link #terminated()} tells which. While open, the session pings
 * every {@link RoomSessionOptions#pingInterval()}.
 *
 * <p>Reconnect: when the stream fails ({@code UNAVAILABLE} from a server that is down or not the
 * leader — the session follows its {@code hourglass-leader} hint — or another retryable status),
 * or the server answers {@code UNKNOWN_CLIENT}, the session opens a new stream, gets a new
 * {@link #clientId()}, and subscribes every room again with its mode. For each SYNC room it
 * passes the last ackable message received and not yet acked as {@code held_message_id}, so the
 * room keeps waiting for that ack; acking a message received on an earlier stream is right, since
 * the server matches acks by message id. Every subscribe carries the session's {@link #sessionId()},
 * which — unlike the client id — never changes: a release records the session ids of the members it
 * went to, so after a failover the new leader resumes the room as soon as all of them are back. Rooms the server ejected the session from for a
 * timeout are not subscribed again. A message the server released is never sent twice (except
 * in an at-least-once room after a failover, flagged {@link ReceivedRoomMessage#redelivered()}).
 *
 * <p>Shards: on a cluster of several event shards a room belongs to shard
 * {@code xxHash64(room) % shards}, and only that shard's leader runs it. The session then keeps a
 * stream per shard it has rooms on, each to that shard's leader and each reconnecting on its own
 * (its own {@link RoomHandler#onOpened} and client id); requests wait for the first stream to
 * tell the shard count. Handler calls of all of them run on the one session thread. If one of
 * them gives up, the session ends. On a cluster of one shard there is one stream, as described.
 *
 * <p>Requests may be made in any state, from any thread, the handler included; made while no
 * stream is open, they are sent once one is. Their futures complete with the server's
 * {@link RoomReply} — after a reconnect, the reply to the request as sent again on the new stream
 * (an unsubscribe then pending completes as {@code UNSUBSCRIBED}: the membership ended with the
 * stream) — or fail with {@link InvalidRequestException} when the server refuses a malformed
 * request ({@code INVALID_ARGUMENT}; a refused subscribe is not restored on reconnect), or with
 * {@link HourglassClientException} when the session ends first. They
 * complete on gRPC or client threads: do not block in dependent stages. Handler calls run on the
 * session's own thread, one at a time, in the server's order (see {@link RoomHandler}).
 */
public final class RoomSession implements AutoCloseable {
    private final RoomClient client;
    private final RoomSessionOptions options;
    private final ServerPool pool;
    private final ScheduledExecutorService timer;
    private final ShardMap shardMap;
    private final RoomHandlerLoop handlerLoop;
    private final Consumer<RoomSession> onTerminated;
    /** Shard 0's connection: opened at once, and the one that learns the shard count. */
    private final RoomConnection first;
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();

    private final Object lock = new Object();
    // Guarded by lock.
    /** Connections by shard, shard 0's included. */
    private final Map<Integer, RoomConnection> connections = new java.util.TreeMap<>();
    /** Requests made before the shard count was known, in order. */
    private final java.util.List<Request> waiting = new java.util.ArrayList<>();
    /** The cluster's shard count; 0 until known. */
    private int shards;
    private boolean ended;

    RoomSession(RoomSessionOptions options, ServerPool pool, ScheduledExecutorService timer,
                RoomClient client, String threadName, Consumer<RoomSession> onTerminated, ShardMap shardMap) {
        this.client = client;
        this.options = options;
        this.pool = pool;
        this.timer = timer;
        this.shardMap = shardMap;
        this.onTerminated = onTerminated;
        this.handlerLoop = new RoomHandlerLoop(threadName, options.handler());
        this.first = connection(0);
        ShardMap.Snapshot known = shardMap == null ? null : shardMap.current();
        if (known != null) {
            shards = Math.max(1, known.count());
        }
    }

    void start() {
        handlerLoop.start();
        first.start();
    }

    /** Shard {@code shard}'s connection, made (not started) if new. Caller holds lock, or is the constructor. */
    private RoomConnection connection(int shard) {
        RoomConnection c = connections.get(shard);
        if (c == null) {
            String leader = shardMap == null ? null : shardMap.leaderOf(shard);
            c = new RoomConnection(options, pool, timer, handlerLoop, shard,
                    leader == null ? null : pool.endpointOf(leader), this::connectionEnded, this::learned);
            connections.put(shard, c);
        }
        return c;
    }

    /** A stream opened and told the shard count: requests that waited for it go to their shards now, in order. */
    private void learned(int count) {
        synchronized (lock) {
            if (shards != 0 || ended) {
                return;
            }
            shards = Math.max(1, count);
            java.util.List<Request> ready = new java.util.ArrayList<>(waiting);
            waiting.clear();
            ready.forEach(this::route);
        }
    }

    /**
     * Sends {@code request} on its room's shard's connection, or keeps it until the shard count is
     * known. Under the lock, so that requests keep their order across that moment (a connection
     * never calls into the session under its own lock).
     */
    private CompletableFuture<RoomReply> route(Request request) {
        synchronized (lock) {
            if (shards == 0 && !ended) {
                if (request.kind() == Kind.UNSUBSCRIBE) { // no stream, no membership: answered at once
                    boolean wasSubscribed = withdraw(request.room());
                    request.reply().complete(wasSubscribed ? new RoomReply(RoomReply.UNSUBSCRIBED, true)
                            : new RoomReply(RoomReply.NOT_SUBSCRIBED, false));
                } else if (!joinWaitingSubscribe(request)) {
                    waiting.add(request);
                }
                return request.reply();
            }
            int shard = shards <= 1 ? 0 : ShardHash.shardOf(request.room(), shards);
            RoomConnection target = connections.get(shard);
            if (target == null && ended) {
                target = first; // refuses it: the session is closed
            } else if (target == null) {
                target = connection(shard);
                target.start();
            }
            return target.request(request);
        }
    }

    /**
     * A repeated subscribe before the first stream opens completes with the first one's reply (the
     * room is subscribed once, in the first mode); whether {@code request} was one. Caller holds lock.
     */
    private boolean joinWaitingSubscribe(Request request) {
        if (request.kind() != Kind.SUBSCRIBE) {
            return false;
        }
        for (Request r : waiting) {
            if (r.kind() == Kind.SUBSCRIBE && r.room().equals(request.room())) {
                r.reply().whenComplete((reply, error) -> {
                    if (error != null) {
                        request.reply().completeExceptionally(error);
                    } else {
                        request.reply().complete(reply);
                    }
                });
                return true;
            }
        }
        return false;
    }

    /** Takes back the waiting subscribes of {@code room}; whether there were any. Caller holds lock. */
    private boolean withdraw(String room) {
        boolean any = false;
        for (java.util.Iterator<Request> it = waiting.iterator(); it.hasNext(); ) {
            Request r = it.next();
            if (r.kind() == Kind.SUBSCRIBE && r.room().equals(room)) {
                it.remove();
                any = true;
                r.reply().completeExceptionally(new HourglassClientException("subscribe to room '" + room
                        + "' was withdrawn by an unsubscribe before the server answered it"));
            }
        }
        return any;
    }

    /** One connection ended: a failure ends the session (its other streams are closed). */
    private void connectionEnded() {
        RoomConnection failed = null;
        synchronized (lock) {
            if (ended) {
                return;
            }
            for (RoomConnection c : connections.values()) {
                if (c.terminated().isCompletedExceptionally()) {
                    failed = c;
                    break;
                }
            }
            if (failed == null) {
                return;
            }
        }
        Throwable why = failed.terminated().handle((v, e) -> e).join();
        endAll(why instanceof java.util.concurrent.CompletionException ce && ce.getCause() != null ? ce.getCause() : why);
    }

    /** Ends every connection; the session's termination completes with {@code failure} (null: closed). */
    private void endAll(Throwable failure) {
        java.util.List<RoomConnection> all;
        java.util.List<Request> unsent;
        synchronized (lock) {
            if (ended) {
                return;
            }
            ended = true;
            all = new java.util.ArrayList<>(connections.values());
            unsent = new java.util.ArrayList<>(waiting);
            waiting.clear();
        }
        HourglassClientException why = failure instanceof HourglassClientException h ? h
                : failure == null ? new HourglassClientException("room session is closed")
                : new HourglassClientException("room session ended: " + failure.getMessage(), failure);
        unsent.forEach(r -> r.reply().completeExceptionally(why));
        handlerLoop.stop(options.closeTimeout());
        all.forEach(RoomConnection::close);
        if (failure == null) {
            terminated.complete(null);
        } else {
            terminated.completeExceptionally(why);
        }
        onTerminated.accept(this);
    }

    private java.util.List<RoomConnection> connections() {
        synchronized (lock) {
            return new java.util.ArrayList<>(connections.values());
        }
    }

    /** The client id the server issued to the current (or last) stream of shard 0's rooms; empty before the first. */
    public String clientId() {
        return first.clientId();
    }

    /**
     * This session's own identity: a random UUID drawn when the session was opened, sent with every
     * subscribe and the same across reconnects (the {@link #clientId()} is not).
     */
    public String sessionId() {
        return first.sessionId();
    }

    /** The heartbeat timeout the server granted; null before the session first opened. */
    public Duration clientTimeout() {
        return first.clientTimeout();
    }

    /** Whether every stream the session uses is open and the server has issued it a client id. */
    public boolean isOpen() {
        return connections().stream().allMatch(RoomConnection::isOpen);
    }

    /** Completes with the first client id, or fails if the session ends before it opens. */
    public CompletableFuture<String> opened() {
        return first.opened();
    }

    /**
     * Completes normally when the session was closed, exceptionally with an
     * {@link HourglassClientException} when it gave up or was refused.
     */
    public CompletableFuture<Void> terminated() {
        return terminated;
    }

    /** The rooms this session takes part in (or will, once a stream is open), with their modes. */
    public Map<String, RoomMode> subscriptions() {
        Map<String, RoomMode> all = new java.util.TreeMap<>();
        connections().forEach(c -> all.putAll(c.rooms()));
        synchronized (lock) {
            waiting.stream().filter(r -> r.kind() == Kind.SUBSCRIBE).forEach(r -> all.putIfAbsent(r.room(), r.mode()));
        }
        return all;
    }

    /**
     * Joins {@code room}. Deliveries may reach the handler before the returned future completes.
     * A repeat answers {@code ALREADY_SUBSCRIBED} and keeps the first mode.
     *
     * @throws IllegalArgumentException if the room is blank
     */
    public CompletableFuture<RoomReply> subscribe(String room, RoomMode mode) {
        RoomClient.requireRoom(room);
        Objects.requireNonNull(mode, "mode");
        return route(new Request(Kind.SUBSCRIBE, room, mode, "", new CompletableFuture<>()));
    }

    /**
     * Leaves {@code room} (that room only). While no stream is open it completes at once:
     * {@code UNSUBSCRIBED}, or {@code NOT_SUBSCRIBED} (ok = false) if the session was not in it.
     *
     * @throws IllegalArgumentException if the room is blank
     */
    public CompletableFuture<RoomReply> unsubscribe(String room) {
        RoomClient.requireRoom(room);
        return route(new Request(Kind.UNSUBSCRIBE, room, null, "", new CompletableFuture<>()));
    }

    /**
     * Acks a delivery: once every SYNC member has acked it, the room releases its next message.
     * The reply says what it did: {@code ACKED}, or with ok = false {@code DUPLICATE},
     * {@code NOT_IN_FLIGHT}, {@code OUT_OF_BAND}, {@code NOT_MEMBER}, ...
     */
    public CompletableFuture<RoomReply> ack(ReceivedRoomMessage message) {
        return ack(message.room(), message.messageId());
    }

    /** Acks {@code messageId} in {@code room}; see {@link #ack(ReceivedRoomMessage)}. */
    public CompletableFuture<RoomReply> ack(String room, String messageId) {
        RoomClient.requireRoom(room);
        Objects.requireNonNull(messageId, "messageId");
        return route(new Request(Kind.ACK, room, null, messageId, new CompletableFuture<>()));
    }

    /**
     * Sends a message to {@code room} as this session, which counts as its heartbeat in that room's
     * shard; otherwise as {@link RoomClient#send(String, byte[], int)}.
     */
    public String send(String room, byte[] payload, int priority) {
        RoomConnection c;
        synchronized (lock) {
            c = connections.get(shards <= 1 ? 0 : ShardHash.shardOf(room, shards));
        }
        return client.send(room, payload, priority, c == null ? "" : c.clientId());
    }

    /**
     * Stops handler calls (waiting for the running one unless called from it), half-closes the
     * streams so that acks already sent are processed, and cancels each the server has not ended
     * within {@link RoomSessionOptions#closeTimeout()}; then fails what is still unanswered.
     * Idempotent.
     */
    @Override
    public void close() {
        endAll(null);
    }
}
