package io.hourglass.client;

import com.google.protobuf.Message;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.EjectReason;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomConfigureResponse;
import io.hourglass.api.v1.RoomDelivery;
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
import io.hourglass.api.v1.SessionOpened;
import io.hourglass.api.v1.SessionReply;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionResponse;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An in-process {@code Rooms} service over a {@link FakeRoomEngine} that behaves like ROOMS.md
 * for what the client tests exercise, plus scripted failures: unary calls failing with a status
 * (and a leader hint), a refused or delayed open, a follower that names its leader, silent acks,
 * and an UNKNOWN_CLIENT answer. Each session's frames are written under its monitor.
 */
final class FakeRooms implements AutoCloseable {
    static final long NOW = 1_700_000_000_000L;
    static final Metadata.Key<String> LEADER = Metadata.Key.of("hourglass-leader", Metadata.ASCII_STRING_MARSHALLER);

    final String name = InProcessServerBuilder.generateName();
    final List<FakeSession> sessions = new CopyOnWriteArrayList<>();
    /** Every unary request received, in order. */
    final List<Message> unaryRequests = new CopyOnWriteArrayList<>();
    /** Statuses the next unary calls fail with, in order. */
    final Queue<Status> unaryFailures = new ConcurrentLinkedQueue<>();
    /** When set, every call fails UNAVAILABLE naming this server as the leader. */
    volatile String followerOf;
    volatile Status openFailure;
    /** Acks are processed but not answered. */
    volatile boolean silentAcks;
    /** While set, {@code opened} answers wait for {@link #releaseOpens()}. */
    volatile boolean holdOpens;
    /** WhoAmI calls (the client's liveness question) go unanswered while set, as on a paused server. */
    volatile boolean questionsHang;
    private final Queue<Runnable> heldOpens = new ConcurrentLinkedQueue<>();
    /** The next ping is answered UNKNOWN_CLIENT. */
    final AtomicBoolean forgetNextPing = new AtomicBoolean();
    private final FakeRoomEngine engine = new FakeRoomEngine();
    private final Server server;

    FakeRooms() throws IOException {
        server = InProcessServerBuilder.forName(name).addService(new Service()).addService(new Questions()).build()
                .start();
    }

    String address() {
        return name + ":1";
    }

    static ChannelFactory channels() {
        return FakeBroker.channels();
    }

    FakeSession session(int index) {
        return sessions.get(index);
    }

    void releaseOpens() {
        holdOpens = false;
        for (Runnable open = heldOpens.poll(); open != null; open = heldOpens.poll()) {
            open.run();
        }
    }

    void eject(FakeSession session, String room, EjectReason reason) {
        engine.eject(session, room, reason);
    }

    @Override
    public void close() {
        server.shutdownNow();
    }

    /** The server side of one Session stream. */
    final class FakeSession implements StreamObserver<SessionRequest> {
        final List<SessionRequest> received = new CopyOnWriteArrayList<>();
        /** System.nanoTime() at which each of {@code received} arrived. */
        final List<Long> receivedAt = new CopyOnWriteArrayList<>();
        final List<RoomDelivery> delivered = new CopyOnWriteArrayList<>();
        volatile String clientId = "";
        volatile boolean halfClosed;
        volatile boolean cancelled;
        private final ServerCallStreamObserver<SessionResponse> out;
        private boolean ended;

        FakeSession(ServerCallStreamObserver<SessionResponse> out) {
            this.out = out;
            out.setOnCancelHandler(() -> {
                cancelled = true;
                engine.left(this);
            });
        }

        List<SessionRequest> requests(SessionRequest.OpCase op) {
            return received.stream().filter(r -> r.getOpCase() == op).toList();
        }

        /** Ends the stream; the session has left every room before the client sees the end. */
        void fail(Status status) {
            synchronized (engine) {
                end();
                engine.left(this);
                out.onError(status.asRuntimeException(leaderTrailer()));
            }
        }

        void deliver(String room, FakeRoomEngine.Pending m, boolean ackable, boolean oob) {
            RoomDelivery d = RoomDelivery.newBuilder().setRoom(room).setMessageId(m.id())
                    .setPriority(m.priority()).setPayload(m.payload()).setAckable(ackable).setOob(oob)
                    .setSentAtMs(NOW + m.seq()).setDeliveredAtMs(NOW + 1_000 + m.seq()).build();
            delivered.add(d);
            push(SessionResponse.newBuilder().setDelivery(d).build());
        }

        synchronized void push(SessionResponse response) {
            if (!ended && !cancelled) {
                out.onNext(response);
            }
        }

        private synchronized void end() {
            ended = true;
        }

        @Override
        public void onNext(SessionRequest request) {
            receivedAt.add(System.nanoTime());
            received.add(request);
            if (request.hasOpen()) {
                Status refusal = openFailure;
                if (refusal != null) {
                    fail(refusal);
                    return;
                }
                clientId = "c-" + sessions.size();
                long timeout = request.getOpen().getClientTimeoutMs();
                Runnable opened = () -> push(SessionResponse.newBuilder().setOpened(SessionOpened.newBuilder()
                        .setClientId(clientId).setClientTimeoutMs(timeout == 0 ? 2_000 : timeout)).build());
                if (holdOpens) {
                    heldOpens.add(opened);
                } else {
                    opened.run();
                }
                return;
            }
            SessionReply.Builder reply;
            if (request.hasPing()) {
                reply = forgetNextPing.compareAndSet(true, false)
                        ? FakeRoomEngine.reply("UNKNOWN_CLIENT", false) : FakeRoomEngine.reply("OK", true);
            } else {
                reply = engine.handle(this, request);
            }
            if (!(request.hasAck() && silentAcks)) {
                push(SessionResponse.newBuilder()
                        .setReply(reply.setRequestId(request.getRequestId())).build());
            }
        }

        @Override
        public void onError(Throwable t) {
            cancelled = true;
            engine.left(this);
        }

        @Override
        public void onCompleted() {
            halfClosed = true;
            engine.left(this);
            synchronized (this) {
                if (!ended) {
                    ended = true;
                    out.onCompleted();
                }
            }
        }
    }

    private Metadata leaderTrailer() {
        Metadata trailers = new Metadata();
        if (followerOf != null) {
            trailers.put(LEADER, followerOf);
        }
        return trailers;
    }

    private final class Questions extends io.hourglass.api.v1.SecurityGrpc.SecurityImplBase {
        @Override
        public void whoAmI(io.hourglass.api.v1.WhoAmIRequest request,
                           io.grpc.stub.StreamObserver<io.hourglass.api.v1.WhoAmIResponse> response) {
            if (!questionsHang) {
                response.onNext(io.hourglass.api.v1.WhoAmIResponse.getDefaultInstance());
                response.onCompleted();
            }
        }
    }

    private final class Service extends RoomsGrpc.RoomsImplBase {
        @Override
        public StreamObserver<SessionRequest> session(StreamObserver<SessionResponse> response) {
            FakeSession s = new FakeSession((ServerCallStreamObserver<SessionResponse>) response);
            sessions.add(s);
            if (followerOf != null) {
                s.fail(Status.UNAVAILABLE.withDescription("not the leader"));
            }
            return s;
        }

        @Override
        public void send(RoomSendRequest q, StreamObserver<RoomSendResponse> o) {
            if (!refused(q, o)) {
                String id = engine.send(q.getRoom(), q.getPriority(), q.getPayload());
                answer(o, RoomSendResponse.newBuilder().setMessageId(id).build());
            }
        }

        @Override
        public void sendOutOfBand(RoomSendRequest q, StreamObserver<RoomSendOutOfBandResponse> o) {
            if (!refused(q, o)) {
                Map.Entry<String, Integer> sent = engine.sendOutOfBand(q.getRoom(), q.getPayload());
                answer(o, RoomSendOutOfBandResponse.newBuilder().setMessageId(sent.getKey())
                        .setRecipients(sent.getValue()).build());
            }
        }

        @Override
        public void peek(RoomPeekRequest q, StreamObserver<RoomPeekResponse> o) {
            if (!refused(q, o)) {
                answer(o, engine.peek(q));
            }
        }

        @Override
        public void state(RoomStateRequest q, StreamObserver<RoomState> o) {
            if (!refused(q, o)) {
                answer(o, engine.state(q.getRoom()));
            }
        }

        @Override
        public void metrics(RoomMetricsRequest q, StreamObserver<RoomMetricsResponse> o) {
            if (!refused(q, o)) {
                answer(o, engine.metrics(q.getTopN()));
            }
        }

        @Override
        public void configure(RoomConfigureRequest q, StreamObserver<RoomConfigureResponse> o) {
            if (!refused(q, o)) {
                answer(o, RoomConfigureResponse.getDefaultInstance());
            }
        }

        private boolean refused(Message request, StreamObserver<?> o) {
            unaryRequests.add(request);
            Status failure = unaryFailures.poll();
            if (failure == null && followerOf != null) {
                failure = Status.UNAVAILABLE.withDescription("not the leader");
            }
            if (failure == null && request.toString().contains("\"bad\"")) {
                failure = Status.INVALID_ARGUMENT.withDescription("room 'bad' is not allowed");
            }
            if (failure != null) {
                o.onError(failure.asRuntimeException(leaderTrailer()));
                return true;
            }
            return false;
        }

        private <T> void answer(StreamObserver<T> o, T response) {
            o.onNext(response);
            o.onCompleted();
        }
    }
}
