package io.hourglass.client;

import io.grpc.Status;
import io.hourglass.client.RoomMemberships.Completion;
import io.hourglass.client.RoomMemberships.Kind;
import io.hourglass.client.RoomMemberships.Request;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The machinery behind a {@link RoomSession} for the rooms of one event shard: one
 * {@link RoomSessionStream} at a time to that shard's leader, its requests, pings and reconnects
 * (the behaviour is documented on {@link RoomSession}). The handler loop is the session's, shared
 * by its connections.
 *
 * <p>All state is guarded by {@code lock}; gRPC callbacks, the timer (pings, reconnects) and
 * callers' threads take it briefly and never block under it. Futures are completed, and handler
 * events queued to the {@link RoomHandlerLoop}, only in the order the server's events arrived;
 * futures only after the lock is released, so that dependent stages never run under it.
 */
final class RoomConnection {
    private static final Logger LOG = LoggerFactory.getLogger(RoomConnection.class);

    private final RoomSessionOptions options;
    private final ServerPool pool;
    private final ScheduledExecutorService timer;
    private final RoomHandlerLoop handlerLoop;
    private final Runnable onTerminated;
    private final java.util.function.IntConsumer onShards;
    private final RoomReconnects reconnects;
    private final int shard;
    private final CompletableFuture<String> opened = new CompletableFuture<>();
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();
    /** Why the session ended for good, when it was a failure rather than close(); guarded by lock. */
    private HourglassClientException terminalFailure;
    private final AtomicLong requestIds = new AtomicLong();
    /**
     * This session's own identity, sent with every subscribe: unlike the client id, it stays the same
     * across reconnects, so that a new leader recognises the members that held a message at a failover.
     */
    private final String sessionId = UUID.randomUUID().toString();
    private final RoomSessionStream.Listener listener = new StreamListener();

    private final Object lock = new Object();
    // Guarded by lock.
    private final RoomMemberships memberships = new RoomMemberships();
    private RoomSessionStream current;
    /** Whether the server has opened {@code current}. */
    private boolean open;
    private ScheduledFuture<?> reconnectTask;
    private ScheduledFuture<?> pingTask;
    /** Set by close() or a terminal failure: no reconnect, no new request once no stream is open. */
    private boolean closing;
    /** Where the next stream goes when known (the shard's leader, as learned or named by a server); else the pool's current. */
    private ServerPool.Endpoint next;
    private volatile String clientId = "";
    private volatile Duration clientTimeout;

    /**
     * @param shard the event shard whose rooms this connection serves (0 on a cluster of one)
     * @param first the server to try first (the shard's leader when the client knows it), or null
     * @param onShards told the cluster's shard count on every open (0 from a server older than shards)
     */
    RoomConnection(RoomSessionOptions options, ServerPool pool, ScheduledExecutorService timer,
                   RoomHandlerLoop handlerLoop, int shard, ServerPool.Endpoint first, Runnable onTerminated,
                   java.util.function.IntConsumer onShards) {
        this.options = options;
        this.pool = pool;
        this.timer = timer;
        this.handlerLoop = handlerLoop;
        this.shard = shard;
        this.next = first;
        this.onTerminated = onTerminated;
        this.onShards = onShards;
        this.reconnects = new RoomReconnects(options, pool);
    }

    void start() {
        connect();
    }

    int shard() {
        return shard;
    }

    String clientId() {
        return clientId;
    }

    String sessionId() {
        return sessionId;
    }

    Duration clientTimeout() {
        return clientTimeout;
    }

    boolean isOpen() {
        synchronized (lock) {
            return open && !closing;
        }
    }

    CompletableFuture<String> opened() {
        return opened;
    }

    CompletableFuture<Void> terminated() {
        return terminated;
    }

    Map<String, RoomMode> rooms() {
        synchronized (lock) {
            return memberships.rooms();
        }
    }

    /** Sends a request of the user now, or keeps it for the next stream (see {@link RoomMemberships#accept}). */
    CompletableFuture<RoomReply> request(Request request) {
        List<Completion> done = new ArrayList<>();
        synchronized (lock) {
            if (closing && !open) {
                // A session the server refused (or that failed for good) reports why, not just "closed".
                request.reply().completeExceptionally(terminalFailure != null ? terminalFailure
                        : new HourglassClientException("room session is closed"));
                return request.reply();
            }
            if (memberships.accept(request, open, done)) {
                sendLocked(request);
            }
        }
        done.forEach(Completion::run);
        return request.reply();
    }

    /** See {@link RoomSession#close()}. */
    void close() {
        RoomSessionStream stream;
        List<Completion> done = new ArrayList<>();
        HourglassClientException closedException = new HourglassClientException("room session is closed");
        synchronized (lock) {
            if (closing) {
                return;
            }
            closing = true;
            stream = open ? current : null;
            cancelTasksLocked();
            memberships.failUnsent(closedException, done);
        }
        done.forEach(Completion::run);
        // Handler calls may still ack on the open stream until they are done.
        handlerLoop.stop(options.closeTimeout());
        if (stream != null) {
            stream.halfClose();
            try {
                stream.ended().get(options.closeTimeout().toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                stream.cancel("room session closed");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stream.cancel("room session closed");
            } catch (ExecutionException e) {
                LOG.debug("session stream ended with error while closing", e);
            }
        }
        RoomSessionStream unopened;
        synchronized (lock) {
            unopened = stream == null ? current : null;
            current = null;
            open = false;
            memberships.failAll(closedException, done);
        }
        if (unopened != null) {
            unopened.cancel("room session closed");
        }
        done.forEach(Completion::run);
        opened.completeExceptionally(closedException);
        LOG.debug("room session {} closed", clientId);
        terminated.complete(null);
        onTerminated.run();
    }

    /**
     * Sends {@code request} on the open stream. If the stream has just ended, the request stays
     * unanswered and is carried over to the next one. Caller holds lock.
     */
    private void sendLocked(Request request) {
        long id = requestIds.incrementAndGet();
        memberships.sent(id, request);
        current.send(RoomCodec.toFrame(id, request, sessionId));
    }

    private void ping(RoomSessionStream stream) {
        synchronized (lock) {
            if (stream == current && open && !closing) {
                sendLocked(Request.ping());
            }
        }
    }

    /** Opens the next stream; started under lock so that close() never sees a stream without a call. */
    private void connect() {
        synchronized (lock) {
            if (closing) {
                return;
            }
            reconnectTask = null;
            RoomSessionStream stream = new RoomSessionStream(next != null ? next : pool.current(), listener);
            current = stream;
            pool.stallWatch().watch(stream);
            open = false;
            LOG.debug("opening room session on {}", stream.endpoint().address());
            stream.start(options.clientTimeout() == null ? 0 : options.clientTimeout().toMillis(), shard);
        }
    }

    /**
     * Leaves {@code stream}: its unanswered requests are carried over and the next stream is
     * scheduled; returns why the session must end instead, or null. Caller holds lock.
     */
    private HourglassClientException streamLostLocked(RoomSessionStream stream, Status status,
                                                      List<Completion> done) {
        current = null;
        if (open) {
            open = false;
            reconnects.lostOpenStream();
        }
        cancelTasksLocked();
        memberships.streamLost(done);
        String hint = stream.leaderHint();
        next = hint == null ? null : pool.endpointOf(hint); // the shard's leader as the server named it
        Duration wait;
        try {
            wait = reconnects.next(stream, status);
        } catch (HourglassClientException e) {
            return e;
        }
        LOG.info("room session {} on {} ended ({}); reconnecting in {} ms",
                clientId.isEmpty() ? "(not opened)" : clientId,
                stream.endpoint().address(), status.getCode(), wait.toMillis());
        try {
            reconnectTask = timer.schedule(this::connect, wait.toNanos(), TimeUnit.NANOSECONDS);
            return null;
        } catch (RejectedExecutionException e) {
            return new HourglassClientException("client is closed", e);
        }
    }

    private void cancelTasksLocked() {
        if (reconnectTask != null) {
            reconnectTask.cancel(false);
            reconnectTask = null;
        }
        if (pingTask != null) {
            pingTask.cancel(false);
            pingTask = null;
        }
    }

    /** Ends the session without a stream to close. Caller must not hold lock. */
    private void terminate(HourglassClientException failure) {
        List<Completion> done = new ArrayList<>();
        synchronized (lock) {
            if (closing) {
                return;
            }
            closing = true;
            terminalFailure = failure;
            current = null;
            open = false;
            cancelTasksLocked();
            memberships.failAll(failure, done);
        }
        done.forEach(Completion::run);
        handlerLoop.stop(Duration.ZERO);
        LOG.warn("room session ended: {}", failure.getMessage());
        opened.completeExceptionally(failure);
        terminated.completeExceptionally(failure);
        onTerminated.run();
    }

    private final class StreamListener implements RoomSessionStream.Listener {
        @Override
        public void onOpened(RoomSessionStream stream, String id, long clientTimeoutMs, int shards) {
            synchronized (lock) {
                if (stream != current || closing) {
                    return;
                }
                open = true;
                clientId = id;
                Duration granted = clientTimeoutMs > 0 ? Duration.ofMillis(clientTimeoutMs)
                        : Objects.requireNonNullElse(options.clientTimeout(),
                                RoomSessionOptions.MIN_CLIENT_TIMEOUT);
                clientTimeout = granted;
                handlerLoop.submit(h -> h.onOpened(id));
                for (Request request : memberships.reopen()) {
                    sendLocked(request);
                }
                long interval = options.pingIntervalFor(granted).toNanos();
                try {
                    pingTask = timer.scheduleAtFixedRate(() -> ping(stream), interval, interval,
                            TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException e) {
                    LOG.debug("client closing; no pings for room session {}", id);
                }
            }
            LOG.info("room session opened on {} as {}{}", stream.endpoint().address(), id,
                    shards > 1 ? " (shard " + shard + " of " + shards + ")" : "");
            onShards.accept(shards);
            opened.complete(id);
        }

        @Override
        public void onMessage(RoomSessionStream stream, ReceivedRoomMessage message) {
            synchronized (lock) {
                memberships.received(message);
                if (stream == current) {
                    reconnects.working();
                }
                // Queued under the lock: handler events keep the order of the server's events.
                handlerLoop.submit(h -> h.onMessage(message));
            }
        }

        @Override
        public void onEjected(RoomSessionStream stream, RoomEjection ejection) {
            List<Completion> done = new ArrayList<>();
            synchronized (lock) {
                if (stream == current) {
                    memberships.ejected(ejection, done);
                }
                handlerLoop.submit(h -> h.onEjected(ejection));
            }
            done.forEach(Completion::run);
            LOG.info("room session {} ejected from room {} ({})", clientId, ejection.room(), ejection.reason());
        }

        @Override
        public void onReply(RoomSessionStream stream, long requestId, RoomReply reply, String error) {
            List<Completion> done = new ArrayList<>();
            HourglassClientException failure = null;
            boolean restart = false;
            synchronized (lock) {
                Request request = stream == current ? memberships.replied(requestId) : null;
                if (request == null) {
                    return;
                }
                if (RoomReply.UNKNOWN_CLIENT.equals(reply.outcome()) && request.kind() != Kind.UNSUBSCRIBE) {
                    // The server no longer knows this client (evicted, or a new leader): carry on
                    // as a new session; ABORTED reconnects without leaving this server.
                    memberships.carryOver(request, done);
                    restart = true;
                    failure = streamLostLocked(stream, Status.ABORTED
                            .withDescription("server answered UNKNOWN_CLIENT"), done);
                } else {
                    reconnects.working();
                    memberships.answered(request, reply);
                    if (request.kind() == Kind.SUBSCRIBE) {
                        String id = clientId;
                        handlerLoop.submit(h -> h.onSubscribed(request.room(), id, reply));
                    }
                    if (request.reply() != null) {
                        done.add(RoomReply.INVALID_ARGUMENT.equals(reply.outcome())
                                ? new Completion(request.reply(), null, new InvalidRequestException(
                                        "request rejected: " + error, error, null))
                                : new Completion(request.reply(), reply, null));
                    }
                }
            }
            if (restart) {
                stream.cancel("server no longer knows client " + clientId);
            }
            done.forEach(Completion::run);
            if (failure != null) {
                terminate(failure);
            }
        }

        @Override
        public void onEnded(RoomSessionStream stream, Status status) {
            pool.stallWatch().unwatch(stream);
            List<Completion> done = new ArrayList<>();
            HourglassClientException failure;
            synchronized (lock) {
                if (stream != current || closing) {
                    return;
                }
                failure = streamLostLocked(stream, status, done);
            }
            done.forEach(Completion::run);
            if (failure != null) {
                terminate(failure);
            }
        }
    }
}
