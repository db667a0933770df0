package io.hourglass.server.grpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomConfigureResponse;
import io.hourglass.api.v1.RoomMetricsRequest;
import io.hourglass.api.v1.RoomMetricsResponse;
import io.hourglass.api.v1.RoomPeekRequest;
import io.hourglass.api.v1.RoomPeekResponse;
import io.hourglass.api.v1.RoomSendOutOfBandResponse;
import io.hourglass.api.v1.RoomSendRequest;
import io.hourglass.api.v1.RoomSendResponse;
import io.hourglass.api.v1.RoomState;
import io.hourglass.api.v1.RoomStateRequest;
import io.hourglass.api.v1.RoomsGrpc;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionResponse;
import io.hourglass.core.command.PublishValidator;
import io.hourglass.core.rooms.RoomEngine;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The lock-step rooms API ({@code hourglass.v1.Rooms}, ROOMS.md). Each unary call is one engine call;
 * a malformed request is INVALID_ARGUMENT, and a node that does not lead answers UNAVAILABLE with the
 * {@code hourglass-leader} trailer (the engine's {@code NotLeaderException}). A {@code Session} stream
 * is a {@link RoomSession}.
 *
 * <p>Threads: gRPC's; engine futures complete on the engine thread and only write one response.
 */
public final class RoomsService extends RoomsGrpc.RoomsImplBase {
    /** Peek page size when the request names none. */
    static final int DEFAULT_PEEK_LIMIT = 100;

    private final RoomEngine engine;
    private final Executor writer;
    private final int sessionBuffer;
    private final Duration defaultClientTimeout;
    private final Supplier<String> leaderHint;
    private final Duration maxAckTimeout;
    private final PublishValidator validator;
    private final StreamLimits limits;
    private final Set<RoomSession> sessions = ConcurrentHashMap.newKeySet();
    private final LongAdder sessionsOpened = new LongAdder();
    private final LongAdder sessionsCutOff = new LongAdder();

    /**
     * @param writer drains session buffers into their streams
     * @param sessionBuffer frames a session may have waiting for a slow client before it is cut off
     * @param defaultClientTimeout the heartbeat timeout of a session that asks for none ({@code rooms.clientTimeout})
     * @param leaderHint the leader's client address, or null when unknown: sent with UNAVAILABLE when a session closes
     * @param maxAckTimeout {@code rooms.maxAckTimeout}
     * @param validator checks the producer ids of sends ({@code limits.maxProducerIdBytes})
     * @param limits the open-frame deadline of sessions
     */
    public RoomsService(RoomEngine engine, Executor writer, int sessionBuffer, Duration defaultClientTimeout,
                        Supplier<String> leaderHint, Duration maxAckTimeout, PublishValidator validator,
                        StreamLimits limits) {
        if (sessionBuffer < 1) {
            throw new IllegalArgumentException("sessionBuffer must be positive, got " + sessionBuffer);
        }
        this.engine = engine;
        this.writer = writer;
        this.sessionBuffer = sessionBuffer;
        this.defaultClientTimeout = defaultClientTimeout;
        this.leaderHint = leaderHint;
        this.maxAckTimeout = maxAckTimeout;
        this.validator = validator;
        this.limits = limits;
    }

    @Override
    public StreamObserver<SessionRequest> session(StreamObserver<SessionResponse> out) {
        RoomSession[] self = new RoomSession[1];
        self[0] = new RoomSession(engine, (ServerCallStreamObserver<SessionResponse>) out, writer, sessionBuffer,
                defaultClientTimeout, leaderHint, () -> sessions.remove(self[0]), sessionsCutOff::increment, limits);
        sessions.add(self[0]);
        sessionsOpened.increment();
        return self[0];
    }

    @Override
    public void send(RoomSendRequest request, StreamObserver<RoomSendResponse> out) {
        answer(out, () -> {
                    validator.validateProducerId("", request.getProducerId());
                    return engine.send(request.getRoom(), request.getPriority(), request.getPayload(),
                            RoomsWire.producer(request.getClientId()), request.getProducerId());
                },
                id -> RoomSendResponse.newBuilder().setMessageId(id).build());
    }

    @Override
    public void sendOutOfBand(RoomSendRequest request, StreamObserver<RoomSendOutOfBandResponse> out) {
        answer(out, () -> engine.sendOutOfBand(request.getRoom(), request.getPayload(),
                        RoomsWire.producer(request.getClientId())),
                r -> RoomSendOutOfBandResponse.newBuilder().setMessageId(r.messageId()).setRecipients(r.recipients())
                        .build());
    }

    @Override
    public void peek(RoomPeekRequest request, StreamObserver<RoomPeekResponse> out) {
        int limit = request.getLimit() == 0 ? DEFAULT_PEEK_LIMIT : request.getLimit();
        answer(out, () -> engine.peek(request.getRoom(), request.getOffset(), limit), messages -> {
            RoomPeekResponse.Builder b = RoomPeekResponse.newBuilder();
            messages.forEach(m -> b.addMessages(RoomsWire.pending(m)));
            return b.build();
        });
    }

    @Override
    public void state(RoomStateRequest request, StreamObserver<RoomState> out) {
        answer(out, () -> engine.state(request.getRoom()), RoomsWire::state);
    }

    /** Rooms by name, a page at a time (limit 0 = 100); validated in the engine. */
    @Override
    public void list(io.hourglass.api.v1.RoomListRequest request,
                     StreamObserver<io.hourglass.api.v1.RoomListResponse> out) {
        int limit = request.getLimit() == 0 ? 100 : request.getLimit();
        answer(out, () -> engine.list(request.getOffset(), limit), rooms -> {
            io.hourglass.api.v1.RoomListResponse.Builder b = io.hourglass.api.v1.RoomListResponse.newBuilder();
            rooms.forEach(r -> b.addRooms(RoomsWire.state(r)));
            return b.build();
        });
    }

    @Override
    public void metrics(RoomMetricsRequest request, StreamObserver<RoomMetricsResponse> out) {
        answer(out, () -> engine.metrics(request.getTopN()), RoomsWire::metrics);
    }

    @Override
    public void configure(RoomConfigureRequest request, StreamObserver<RoomConfigureResponse> out) {
        answer(out, () -> engine.configure(request.getRoom(),
                        RoomsWire.settings(request.getAtLeastOnce(), request.getAckTimeoutMs(), maxAckTimeout)),
                v -> RoomConfigureResponse.getDefaultInstance());
    }

    /** Sessions whose stream is open now. */
    public int openSessions() {
        return sessions.size();
    }

    /** Sessions opened since the node started. */
    public long sessionsOpened() {
        return sessionsOpened.sum();
    }

    /** Sessions ended with RESOURCE_EXHAUSTED because their client did not read fast enough. */
    public long sessionsCutOff() {
        return sessionsCutOff.sum();
    }

    /** The node is stopping: every session ends with UNAVAILABLE, so clients go to the next leader at once. */
    public void endSessions(String reason) {
        sessions.forEach(s -> s.shutdown(reason));
    }

    /**
     * Runs the call; a failed future becomes the call's status. A request refused at once throws, on
     * the handler's thread, and {@link ErrorStatusInterceptor} maps it.
     */
    private static <T, R> void answer(StreamObserver<R> out, Supplier<CompletableFuture<T>> call,
                                      Function<T, R> toResponse) {
        call.get().whenComplete((value, error) -> {
            if (error != null) {
                out.onError(StatusMapper.toStatus(error));
                return;
            }
            R response;
            try {
                response = toResponse.apply(value);
            } catch (RuntimeException e) {
                out.onError(StatusMapper.toStatus(e));
                return;
            }
            out.onNext(response);
            out.onCompleted();
        });
    }
}
