package io.hourglass.server.grpc;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.RoomAck;
import io.hourglass.api.v1.RoomSubscribe;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionResponse;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.rooms.ClientId;
import io.hourglass.core.rooms.EjectReason;
import io.hourglass.core.rooms.RoomDelivery;
import io.hourglass.core.rooms.RoomEngine;
import io.hourglass.core.rooms.RoomSink;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Rooms {@code Session} stream, and the engine's {@link RoomSink} for its client.
 *
 * <p>Inbound: the first frame must be {@code open}; it connects a client to the engine, and the
 * stream answers {@code opened} with the client id. Frames that arrive before the engine issued the
 * id wait, in order, and follow it. Every later request is answered with a {@code reply} naming the
 * engine's outcome; a malformed one (bad room name, ...) is refused with outcome
 * {@code INVALID_ARGUMENT} and the stream stays open.
 *
 * <p>Outbound: opened, replies, deliveries and ejections all go through one bounded buffer, so the
 * client sees them in the order they were produced. The buffer is written on the writer executor
 * only while gRPC flow control says the client can take more. A client that lets it overflow is cut
 * off with RESOURCE_EXHAUSTED: a sink must never block the engine thread, so the only other choice
 * would be to lose frames of a lock-step protocol.
 *
 * <p>Ending: the session leaves the engine ({@link RoomEngine#disconnect}) however the stream ends —
 * client cancel, error or half-close, overflow, or the engine closing it ({@link #closed}: leadership
 * lost, evicted from its last room, shutdown), which the client sees as UNAVAILABLE with the
 * {@code hourglass-leader} trailer when a leader is known. When the session ends in an orderly way,
 * what is already buffered is written first.
 *
 * <p>Threads: gRPC calls the observer methods one at a time; the engine thread calls the sink methods
 * (which only queue); the writer executor drains. {@code out} is written only under its monitor.
 */
final class RoomSession implements StreamObserver<SessionRequest>, RoomSink {
    private static final Logger LOG = LoggerFactory.getLogger(RoomSession.class);
    /** How the stream ends when the client ended it first: nothing more is written. */
    private static final StatusRuntimeException ABANDONED = Status.CANCELLED.asRuntimeException();
    private static final StatusRuntimeException COMPLETED = Status.OK.asRuntimeException();

    private final RoomEngines engines;
    /** The shard this stream serves and its engine, set by the open frame (before any other is handled). */
    private volatile int shard;
    private volatile RoomEngine engine;
    private final ServerCallStreamObserver<SessionResponse> out;
    private final Executor writer;
    private final int maxBuffered;
    private final Duration defaultClientTimeout;
    private final Runnable onEnded;
    private final Runnable onCutOff;
    /** Ends the session unless the open frame comes within {@code grpc.initTimeout}. */
    private final StreamLimits.Deadline openDeadline;
    private final Queue<SessionResponse> buffer = new ConcurrentLinkedQueue<>();
    /** Frames in {@link #buffer}; a frame is counted before it is added, so the bound holds. */
    private final AtomicInteger buffered = new AtomicInteger();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    /** How the stream ends, set once: {@link #COMPLETED}, {@link #ABANDONED} or an error status. */
    private final AtomicReference<StatusRuntimeException> ending = new AtomicReference<>();
    /** Drop what is buffered instead of writing it before the end (overflow, client gone). */
    private volatile boolean discard;
    /** Guarded by {@code out}: the response stream was closed. */
    private boolean outClosed;
    /** Guarded by {@code this}: the open frame was seen. */
    private boolean openSeen;
    /** Guarded by {@code this}: the engine's id for this client, once connected. */
    private ClientId client;
    /** Guarded by {@code this}: frames that came before the client id, or null once connected. */
    private List<SessionRequest> early = new ArrayList<>();
    /** Guarded by {@code this}: the session left (or must leave) the engine. */
    private boolean released;

    RoomSession(RoomEngines engines, ServerCallStreamObserver<SessionResponse> out, Executor writer,
                int maxBuffered, Duration defaultClientTimeout, Runnable onEnded,
                Runnable onCutOff, StreamLimits limits) {
        this.engines = engines;
        this.out = out;
        this.writer = writer;
        this.maxBuffered = maxBuffered;
        this.defaultClientTimeout = defaultClientTimeout;
        this.onEnded = onEnded;
        this.onCutOff = onCutOff;
        out.setOnReadyHandler(this::scheduleDrain);
        out.setOnCancelHandler(this::abandon);
        this.openDeadline = limits.awaitFirstFrame("room Session", "open",
                status -> end(status.asRuntimeException(), false));
    }

    // ---- inbound: gRPC's thread for this call, one frame at a time

    @Override
    public void onNext(SessionRequest frame) {
        if (ending.get() != null) {
            return;
        }
        synchronized (this) {
            if (!openSeen) {
                openSeen = true;
                openDeadline.cancel();
                open(frame);
                return;
            }
            if (client == null) {
                early.add(frame);
                return;
            }
        }
        handle(frame);
    }

    private void open(SessionRequest frame) {
        if (frame.getOpCase() != SessionRequest.OpCase.OPEN) {
            end(Status.INVALID_ARGUMENT.withDescription("the first Session frame must be open (with the session's "
                    + "client timeout), got " + describe(frame.getOpCase())).asRuntimeException(), true);
            return;
        }
        long timeoutMs = frame.getOpen().getClientTimeoutMs();
        int wanted = frame.getOpen().getShard();
        if (wanted < 0 || wanted >= engines.count()) {
            end(Status.INVALID_ARGUMENT.withDescription("shard must be between 0 and " + (engines.count() - 1)
                    + " (the cluster has " + engines.count() + " event shards), got " + wanted).asRuntimeException(), true);
            return;
        }
        shard = wanted;
        engine = engines.engine(wanted);
        CompletableFuture<ClientId> connected;
        try {
            if (timeoutMs < 0) {
                throw new InvalidRequestException("client_timeout_ms must be 0 (the server's rooms.clientTimeout) "
                        + "or at least 1000, got " + timeoutMs);
            }
            connected = timeoutMs == 0 ? engine.connect(this) : engine.connect(this, Duration.ofMillis(timeoutMs));
        } catch (RuntimeException e) {
            end(StatusMapper.toStatus(e), true);
            return;
        }
        long effectiveMs = timeoutMs == 0 ? defaultClientTimeout.toMillis() : timeoutMs;
        connected.whenComplete((id, error) -> connected(id, effectiveMs, error));
    }

    /** The engine issued the client id (on the engine thread, usually): answer opened, then the waiting frames. */
    private void connected(ClientId id, long timeoutMs, Throwable error) {
        if (error != null) {
            end(StatusMapper.toStatus(error), true);
            return;
        }
        boolean gone;
        synchronized (this) { // a frame arriving meanwhile waits here, so it follows the early ones
            client = id;
            gone = released;
            if (!gone) {
                send(RoomsWire.opened(id, timeoutMs, engines.count()));
                early.forEach(this::handle);
            }
            early = null;
        }
        if (gone) {
            engine.disconnect(id);
            return;
        }
        LOG.debug("room session opened for client {} (timeout {}ms)", id, timeoutMs);
    }

    private void handle(SessionRequest frame) {
        long requestId = frame.getRequestId();
        ClientId c;
        synchronized (this) {
            c = client;
        }
        try {
            String foreign = foreignRoom(frame);
            if (foreign != null) {
                send(RoomsWire.refused(requestId, foreign));
                return;
            }
            switch (frame.getOpCase()) {
                case SUBSCRIBE -> {
                    RoomSubscribe s = frame.getSubscribe();
                    answer(requestId, engine.subscribe(c, s.getRoom(), RoomsWire.mode(s.getMode()),
                            RoomsWire.heldMessage(s.getHeldMessageId()), RoomsWire.session(s.getSessionId())));
                }
                case UNSUBSCRIBE -> answer(requestId, engine.unsubscribe(c, frame.getUnsubscribe().getRoom()));
                case ACK -> {
                    RoomAck a = frame.getAck();
                    answer(requestId, engine.ack(c, a.getRoom(), a.getMessageId()));
                }
                case PING -> answer(requestId, engine.ping(c));
                case OPEN -> send(RoomsWire.refused(requestId, "this session is already open as client " + c
                        + "; open another stream for another session"));
                case OP_NOT_SET -> send(RoomsWire.refused(requestId,
                        "empty Session frame: send subscribe, unsubscribe, ack or ping"));
            }
        } catch (InvalidRequestException e) {
            send(RoomsWire.refused(requestId, e.getMessage()));
        }
    }

    /** Replies with the outcome; a request the engine cannot serve (no longer leader, shut down) ends the session. */
    private void answer(long requestId, CompletableFuture<? extends Enum<?>> outcome) {
        outcome.whenComplete((o, error) -> {
            if (error == null) {
                send(RoomsWire.reply(requestId, o));
            } else if (StatusMapper.unwrap(error) instanceof InvalidRequestException e) {
                send(RoomsWire.refused(requestId, e.getMessage()));
            } else {
                end(StatusMapper.toStatus(error), true);
            }
        });
    }

    /** Why the room a frame names is not this stream's to serve (another shard's), or null. */
    private String foreignRoom(SessionRequest frame) {
        if (engines.count() == 1) {
            return null;
        }
        String room = switch (frame.getOpCase()) {
            case SUBSCRIBE -> frame.getSubscribe().getRoom();
            case UNSUBSCRIBE -> frame.getUnsubscribe().getRoom();
            case ACK -> frame.getAck().getRoom();
            default -> null;
        };
        if (room == null || room.isEmpty()) {
            return null; // the engine names what is wrong with it
        }
        int owner = engines.shardOf(room);
        if (owner == shard) {
            return null;
        }
        String shown = room.length() > 40 ? room.substring(0, 40) + "…" : room;
        return "room '" + shown + "' is on shard " + owner + " of " + engines.count() + " and this session stream serves "
                + "shard " + shard + ": open a stream per shard (SessionOpen.shard), each to that shard's leader";
    }

    private static String describe(SessionRequest.OpCase op) {
        return op == SessionRequest.OpCase.OP_NOT_SET ? "an empty frame" : op.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public void onError(Throwable t) {
        LOG.debug("room session ended by the client: {}", t.toString());
        abandon();
    }

    /** The client half-closed: the session ends after what is buffered. */
    @Override
    public void onCompleted() {
        end(COMPLETED, true);
    }

    // ---- the engine's sink: engine thread, must not block

    @Override
    public void deliver(RoomDelivery delivery) {
        send(RoomsWire.delivery(delivery));
    }

    @Override
    public void ejected(String room, EjectReason reason) {
        send(RoomsWire.ejected(room, reason));
    }

    @Override
    public void closed(String reason) {
        end(StatusMapper.unavailable("room session closed: " + reason, engines.leaderHint(shard)), true);
    }

    // ---- outbound

    private void send(SessionResponse frame) {
        if (ending.get() != null) {
            return;
        }
        if (buffered.incrementAndGet() > maxBuffered) {
            buffered.decrementAndGet();
            overflow();
            return;
        }
        buffer.add(frame);
        scheduleDrain();
    }

    private void overflow() {
        boolean first = end(Status.RESOURCE_EXHAUSTED.withDescription("the client did not keep up: " + maxBuffered
                + " frames were waiting to be sent; the session is closed").asRuntimeException(), false);
        if (first) {
            onCutOff.run();
            ClientId c;
            synchronized (this) {
                c = client;
            }
            LOG.info("room session of client {} cut off: {} frames buffered and the client is not reading", c,
                    maxBuffered);
        }
    }

    private void abandon() {
        end(ABANDONED, false);
    }

    /**
     * Ends the session; {@code flush} writes what is buffered before the end. Returns whether this call
     * ended it (the first one does).
     */
    private boolean end(StatusRuntimeException how, boolean flush) {
        if (!flush) {
            discard = true;
        }
        if (!ending.compareAndSet(null, how)) {
            return false;
        }
        openDeadline.cancel();
        release();
        scheduleDrain();
        return true;
    }

    /** Leaves the engine; a client id issued later is returned at once (see {@link #connected}). */
    private void release() {
        ClientId c;
        synchronized (this) {
            if (released) {
                return;
            }
            released = true;
            c = client;
        }
        if (c != null) {
            engine.disconnect(c);
        }
    }

    private void scheduleDrain() {
        if (drainScheduled.compareAndSet(false, true)) {
            try {
                writer.execute(this::drain);
            } catch (RejectedExecutionException e) {
                drainScheduled.set(false); // the node is stopping; the server cancels the call
            }
        }
    }

    /**
     * Writes buffered frames while the client can take them; once the session ends, writes the rest
     * regardless (the buffer is bounded, and gRPC queues what the transport cannot send yet), then closes.
     */
    private void drain() {
        drainScheduled.set(false);
        boolean closedNow = false;
        synchronized (out) {
            if (outClosed) {
                return;
            }
            StatusRuntimeException end = ending.get();
            if (discard) {
                buffer.clear();
            }
            while (end != null || out.isReady()) {
                SessionResponse frame = buffer.poll();
                if (frame == null) {
                    break;
                }
                buffered.decrementAndGet();
                out.onNext(frame);
            }
            if (end != null) {
                outClosed = true;
                closedNow = true;
                if (end == COMPLETED) {
                    out.onCompleted();
                } else if (end != ABANDONED) {
                    out.onError(end);
                }
            }
        }
        if (closedNow) {
            buffer.clear();
            onEnded.run();
        }
    }

    /** Ends the session from the server side (the node is stopping): UNAVAILABLE after what is buffered. */
    void shutdown(String reason) {
        end(StatusMapper.unavailable(reason, engines.leaderHint(shard)), true);
    }
}
