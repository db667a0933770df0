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
    private final RoomConnection connection;

    RoomSession(RoomSessionOptions options, ServerPool pool, ScheduledExecutorService timer,
                RoomClient client, String threadName, Consumer<RoomSession> onTerminated) {
        this.client = client;
        this.connection = new RoomConnection(options, pool, timer, threadName,
                () -> onTerminated.accept(this));
    }

    void start() {
        connection.start();
    }

    /** The client id the server issued to the current (or last) stream; empty before the first. */
    public String clientId() {
        return connection.clientId();
    }

    /**
     * This session's own identity: a random UUID drawn when the session was opened, sent with every
     * subscribe and the same across reconnects (the {@link #clientId()} is not).
     */
    public String sessionId() {
        return connection.sessionId();
    }

    /** The heartbeat timeout the server granted; null before the session first opened. */
    public Duration clientTimeout() {
        return connection.clientTimeout();
    }

    /** Whether a stream is open and the server has issued it a client id. */
    public boolean isOpen() {
        return connection.isOpen();
    }

    /** Completes with the first client id, or fails if the session ends before it opens. */
    public CompletableFuture<String> opened() {
        return connection.opened();
    }

    /**
     * Completes normally when the session was closed, exceptionally with an
     * {@link HourglassClientException} when it gave up or was refused.
     */
    public CompletableFuture<Void> terminated() {
        return connection.terminated();
    }

    /** The rooms this session takes part in (or will, once a stream is open), with their modes. */
    public Map<String, RoomMode> subscriptions() {
        return connection.rooms();
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
        return connection.request(new Request(Kind.SUBSCRIBE, room, mode, "", new CompletableFuture<>()));
    }

    /**
     * Leaves {@code room} (that room only). While no stream is open it completes at once:
     * {@code UNSUBSCRIBED}, or {@code NOT_SUBSCRIBED} (ok = false) if the session was not in it.
     *
     * @throws IllegalArgumentException if the room is blank
     */
    public CompletableFuture<RoomReply> unsubscribe(String room) {
        RoomClient.requireRoom(room);
        return connection.request(new Request(Kind.UNSUBSCRIBE, room, null, "", new CompletableFuture<>()));
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
        return connection.request(new Request(Kind.ACK, room, null, messageId, new CompletableFuture<>()));
    }

    /**
     * Sends a message to {@code room} as this session, which counts as its heartbeat; otherwise
     * as {@link RoomClient#send(String, byte[], int)}.
     */
    public String send(String room, byte[] payload, int priority) {
        return client.send(room, payload, priority, connection.clientId());
    }

    /**
     * Stops handler calls (waiting for the running one unless called from it), half-closes the
     * stream so that acks already sent are processed, and cancels it if the server has not ended
     * it within {@link RoomSessionOptions#closeTimeout()}; then fails what is still unanswered.
     * Idempotent.
     */
    @Override
    public void close() {
        connection.close();
    }
}
