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
import io.hourglass.api.v1.RoomListRequest;
import io.hourglass.api.v1.RoomListResponse;
import io.hourglass.core.InvalidRequestException;
import java.util.List;
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
 * The lock-step rooms API ({@code hourglass.v1.Rooms}, ROOMS.md). Each unary call is one engine call
 * on the leader of the room's shard: here when this node leads it, else forwarded to that leader
 * (whose answer or status is the call's); with no leader known the engine answers UNAVAILABLE with
 * the {@code hourglass-leader} trailer when it can. A malformed request is INVALID_ARGUMENT. Lists
 * and metrics merge every shard's. A {@code Session} stream is a {@link RoomSession}, for the rooms
 * of the shard it names.
 *
 * <p>Threads: gRPC's; engine futures complete on the engine thread and only write one response.
 */
public final class RoomsService extends RoomsGrpc.RoomsImplBase {
    /** Peek page size when the request names none. */
    static final int DEFAULT_PEEK_LIMIT = 100;
    /** The most rooms a merged list reaches past its start (each shard's page limit). */
    static final int MAX_MERGED = 10_000;

    /** Deadline of a call forwarded to the leader of a room's shard. */
    static final java.time.Duration FORWARD_DEADLINE = java.time.Duration.ofSeconds(10);

    private final RoomEngines engines;
    private final Function<String, io.grpc.Channel> peers;
    private final Executor writer;
    private final int sessionBuffer;
    private final Duration defaultClientTimeout;
    private final Duration maxAckTimeout;
    private final PublishValidator validator;
    private final StreamLimits limits;
    private final Set<RoomSession> sessions = ConcurrentHashMap.newKeySet();
    private final LongAdder sessionsOpened = new LongAdder();
    private final LongAdder sessionsCutOff = new LongAdder();
    private final LongAdder forwarded = new LongAdder();

    /**
     * @param engines the room engine of each shard
     * @param peers a channel to another node's client port (calls for a shard led there go to it)
     * @param writer drains session buffers into their streams
     * @param sessionBuffer frames a session may have waiting for a slow client before it is cut off
     * @param defaultClientTimeout the heartbeat timeout of a session that asks for none ({@code rooms.clientTimeout})
     * @param maxAckTimeout {@code rooms.maxAckTimeout}
     * @param validator checks the producer ids of sends ({@code limits.maxProducerIdBytes})
     * @param limits the open-frame deadline of sessions
     */
    public RoomsService(RoomEngines engines, Function<String, io.grpc.Channel> peers, Executor writer,
                        int sessionBuffer, Duration defaultClientTimeout, Duration maxAckTimeout,
                        PublishValidator validator, StreamLimits limits) {
        if (sessionBuffer < 1) {
            throw new IllegalArgumentException("sessionBuffer must be positive, got " + sessionBuffer);
        }
        this.engines = engines;
        this.peers = peers;
        this.writer = writer;
        this.sessionBuffer = sessionBuffer;
        this.defaultClientTimeout = defaultClientTimeout;
        this.maxAckTimeout = maxAckTimeout;
        this.validator = validator;
        this.limits = limits;
    }

    @Override
    public StreamObserver<SessionRequest> session(StreamObserver<SessionResponse> out) {
        RoomSession[] self = new RoomSession[1];
        self[0] = new RoomSession(engines, (ServerCallStreamObserver<SessionResponse>) out, writer, sessionBuffer,
                defaultClientTimeout, () -> sessions.remove(self[0]), sessionsCutOff::increment, limits);
        sessions.add(self[0]);
        sessionsOpened.increment();
        return self[0];
    }

    @Override
    public void send(RoomSendRequest request, StreamObserver<RoomSendResponse> out) {
        routed(request.getRoom(), out, engine -> {
                    validator.validateProducerId("", request.getProducerId());
                    return engine.send(request.getRoom(), request.getPriority(), request.getPayload(),
                            RoomsWire.producer(request.getClientId()), request.getProducerId());
                },
                id -> RoomSendResponse.newBuilder().setMessageId(id).build(), stub -> stub.send(request, out));
    }

    @Override
    public void sendOutOfBand(RoomSendRequest request, StreamObserver<RoomSendOutOfBandResponse> out) {
        routed(request.getRoom(), out, engine -> engine.sendOutOfBand(request.getRoom(), request.getPayload(),
                        RoomsWire.producer(request.getClientId())),
                r -> RoomSendOutOfBandResponse.newBuilder().setMessageId(r.messageId()).setRecipients(r.recipients())
                        .build(), stub -> stub.sendOutOfBand(request, out));
    }

    @Override
    public void peek(RoomPeekRequest request, StreamObserver<RoomPeekResponse> out) {
        int limit = request.getLimit() == 0 ? DEFAULT_PEEK_LIMIT : request.getLimit();
        routed(request.getRoom(), out, engine -> engine.peek(request.getRoom(), request.getOffset(), limit), messages -> {
            RoomPeekResponse.Builder b = RoomPeekResponse.newBuilder();
            messages.forEach(m -> b.addMessages(RoomsWire.pending(m)));
            return b.build();
        }, stub -> stub.peek(request, out));
    }

    @Override
    public void state(RoomStateRequest request, StreamObserver<RoomState> out) {
        routed(request.getRoom(), out, engine -> engine.state(request.getRoom()), RoomsWire::state,
                stub -> stub.state(request, out));
    }

    /**
     * Rooms by name, a page at a time (limit 0 = 100); validated in the engine. On a cluster of several
     * shards each shard's leader lists its own rooms and this node merges them.
     */
    @Override
    public void list(RoomListRequest request, StreamObserver<RoomListResponse> out) {
        int limit = request.getLimit() == 0 ? 100 : request.getLimit();
        if (engines.count() == 1 || request.hasShard()) {
            int shard = request.hasShard() ? shardIn(request.getShard()) : 0;
            answer(out, () -> onShard(shard, engine -> engine.list(request.getOffset(), limit).thenApply(RoomsService::listed),
                    (stub, o) -> stub.list(request.toBuilder().setShard(shard).build(), o)), v -> v);
            return;
        }
        int wanted = mergedPage(request.getOffset(), limit);
        eachShard(shard -> onShard(shard, engine -> engine.list(0, wanted).thenApply(RoomsService::listed),
                (stub, o) -> stub.list(RoomListRequest.newBuilder().setShard(shard).setLimit(wanted).build(), o)),
                parts -> {
                    List<RoomState> all = new java.util.ArrayList<>();
                    parts.forEach(p -> all.addAll(p.getRoomsList()));
                    all.sort(java.util.Comparator.comparing(RoomState::getRoom));
                    return RoomListResponse.newBuilder().addAllRooms(all.subList(Math.min(request.getOffset(), all.size()),
                            Math.min(request.getOffset() + limit, all.size()))).build();
                }, out);
    }

    @Override
    public void metrics(RoomMetricsRequest request, StreamObserver<RoomMetricsResponse> out) {
        if (engines.count() == 1 || request.hasShard()) {
            int shard = request.hasShard() ? shardIn(request.getShard()) : 0;
            answer(out, () -> onShard(shard, engine -> engine.metrics(request.getTopN()).thenApply(RoomsWire::metrics),
                    (stub, o) -> stub.metrics(request.toBuilder().setShard(shard).build(), o)), v -> v);
            return;
        }
        int topN = request.getTopN();
        eachShard(shard -> onShard(shard, engine -> engine.metrics(topN).thenApply(RoomsWire::metrics),
                (stub, o) -> stub.metrics(request.toBuilder().setShard(shard).build(), o)),
                parts -> {
                    long withBacklog = 0;
                    List<io.hourglass.api.v1.RoomBacklog> top = new java.util.ArrayList<>();
                    for (RoomMetricsResponse p : parts) {
                        withBacklog += p.getRoomsWithBacklog();
                        top.addAll(p.getTopList());
                    }
                    top.sort(java.util.Comparator.comparingLong(io.hourglass.api.v1.RoomBacklog::getBacklog).reversed()
                            .thenComparing(io.hourglass.api.v1.RoomBacklog::getRoom));
                    return RoomMetricsResponse.newBuilder().setRoomsWithBacklog(withBacklog)
                            .addAllTop(top.subList(0, Math.min(topN, top.size()))).build();
                }, out);
    }

    @Override
    public void configure(RoomConfigureRequest request, StreamObserver<RoomConfigureResponse> out) {
        routed(request.getRoom(), out, engine -> engine.configure(request.getRoom(),
                        RoomsWire.settings(request.getAtLeastOnce(), request.getAckTimeoutMs(), maxAckTimeout)),
                v -> RoomConfigureResponse.getDefaultInstance(), stub -> stub.configure(request, out));
    }

    /** Calls forwarded to the leader of another node's shard since the node started. */
    public long forwardedCalls() {
        return forwarded.sum();
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

    /**
     * Runs a call about {@code room} on its shard's engine when this node leads that shard (or no
     * leader is known: the engine then answers UNAVAILABLE), else forwards it to the shard's leader,
     * whose answer (or status) is this call's.
     */
    private <T, R> void routed(String room, StreamObserver<R> out, Function<RoomEngine, CompletableFuture<T>> local,
                               Function<T, R> toResponse, java.util.function.Consumer<RoomsGrpc.RoomsStub> forward) {
        int shard = engines.shardOf(room);
        RoomEngine engine = engines.engine(shard);
        String leader = engine.isLeading() ? null : engines.leaderHint(shard);
        if (leader == null) {
            answer(out, () -> local.apply(engine), toResponse);
            return;
        }
        forwarded.increment();
        forward.accept(stub(leader));
    }

    /** One shard's part of a merged answer: its engine's here, else its leader's. */
    private <R> CompletableFuture<R> onShard(int shard, Function<RoomEngine, CompletableFuture<R>> local,
                                             java.util.function.BiConsumer<RoomsGrpc.RoomsStub, StreamObserver<R>> remote) {
        RoomEngine engine = engines.engine(shard);
        String leader = engine.isLeading() ? null : engines.leaderHint(shard);
        if (leader == null) {
            return local.apply(engine);
        }
        forwarded.increment();
        CompletableFuture<R> result = new CompletableFuture<>();
        remote.accept(stub(leader), new StreamObserver<>() {
            @Override
            public void onNext(R value) {
                result.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                result.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                result.completeExceptionally(new IllegalStateException("shard " + shard + "'s leader sent no answer"));
            }
        });
        return result;
    }

    /** Asks every shard, then answers with {@code merge} of their parts (in shard order), or the first failure. */
    private static <P, R> void eachShard(java.util.function.IntFunction<CompletableFuture<P>> part,
                                         Function<List<P>, R> merge, StreamObserver<R> out, int count) {
        List<CompletableFuture<P>> parts = new java.util.ArrayList<>();
        for (int i = 0; i < count; i++) {
            parts.add(part.apply(i));
        }
        answer(out, () -> CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new))
                .thenApply(v -> parts.stream().map(CompletableFuture::join).toList()), merge);
    }

    private <P, R> void eachShard(java.util.function.IntFunction<CompletableFuture<P>> part, Function<List<P>, R> merge,
                                  StreamObserver<R> out) {
        eachShard(part, merge, out, engines.count());
    }

    private int shardIn(int shard) {
        if (shard < 0 || shard >= engines.count()) {
            throw new InvalidRequestException("shard must be between 0 and " + (engines.count() - 1) + ", got " + shard);
        }
        return shard;
    }

    /** How many rooms from the start every shard lists for a merged page. */
    private static int mergedPage(int offset, int limit) {
        if (offset < 0 || limit < 0) {
            throw new InvalidRequestException("offset and limit must not be negative, got " + offset + ", " + limit);
        }
        if ((long) offset + limit > MAX_MERGED) {
            throw new InvalidRequestException("on a cluster of several shards offset + limit may be at most " + MAX_MERGED
                    + " (list one shard at a time past that), got " + ((long) offset + limit));
        }
        return offset + limit;
    }

    private static RoomListResponse listed(List<io.hourglass.core.rooms.RoomSnapshot> rooms) {
        RoomListResponse.Builder b = RoomListResponse.newBuilder();
        rooms.forEach(r -> b.addRooms(RoomsWire.state(r)));
        return b.build();
    }

    private RoomsGrpc.RoomsStub stub(String address) {
        return RoomsGrpc.newStub(peers.apply(address))
                .withDeadlineAfter(FORWARD_DEADLINE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }
}
