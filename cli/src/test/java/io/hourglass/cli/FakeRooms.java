package io.hourglass.cli;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.EjectReason;
import io.hourglass.api.v1.PendingRoomMessage;
import io.hourglass.api.v1.RoomConfigureRequest;
import io.hourglass.api.v1.RoomConfigureResponse;
import io.hourglass.api.v1.RoomDelivery;
import io.hourglass.api.v1.RoomEjected;
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
import io.hourglass.api.v1.SubscriptionMode;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-process Rooms service for CLI tests, scripted rather than simulated: a subscriber of a
 * room gets the messages queued for it (ackable when it subscribed SYNC and they are not out of
 * band), then the ejection scripted for it; peek and state answer what the test set; room "bad"
 * is refused. Times are fixed ({@link #NOW}).
 */
final class FakeRooms implements AutoCloseable {
    static final long NOW = FakeBroker.NOW;

    final String name = InProcessServerBuilder.generateName();
    final List<Message> unaryRequests = new CopyOnWriteArrayList<>();
    /** Every session frame received, with the time it arrived (System.nanoTime()). */
    final List<Received> sessionRequests = new CopyOnWriteArrayList<>();
    /** When each delivery was sent (System.nanoTime()), by message id. */
    final Map<String, Long> deliveredAt = new ConcurrentHashMap<>();
    final Map<String, List<RoomDelivery>> queued = new ConcurrentHashMap<>();
    final Map<String, EjectReason> ejections = new ConcurrentHashMap<>();
    /** What List answers. */
    volatile List<io.hourglass.api.v1.RoomState> listed = List.of();
    /** What Metrics answers. */
    volatile RoomMetricsResponse metrics = RoomMetricsResponse.getDefaultInstance();
    volatile List<PendingRoomMessage> pending = List.of();
    volatile RoomState state = RoomState.getDefaultInstance();
    volatile Status openFailure;
    private final AtomicLong sequence = new AtomicLong();
    private final Server server;

    record Received(SessionRequest request, long atNanos) {
    }

    FakeRooms() throws IOException {
        server = InProcessServerBuilder.forName(name).addService(new Service()).build().start();
    }

    String address() {
        return name + ":1";
    }

    RoomDelivery queue(String room, String payload, int priority, boolean oob) {
        long n = sequence.incrementAndGet();
        RoomDelivery d = RoomDelivery.newBuilder().setRoom(room).setMessageId("m-" + n)
                .setPriority(priority).setPayload(ByteString.copyFromUtf8(payload)).setOob(oob)
                .setSentAtMs(NOW + 10).setDeliveredAtMs(NOW + 20).build();
        queued.computeIfAbsent(room, r -> new CopyOnWriteArrayList<>()).add(d);
        return d;
    }

    List<SessionRequest> requests(SessionRequest.OpCase op) {
        return sessionRequests.stream().map(Received::request).filter(r -> r.getOpCase() == op).toList();
    }

    @Override
    public void close() {
        server.shutdownNow();
    }

    private final class Service extends RoomsGrpc.RoomsImplBase {
        @Override
        public StreamObserver<SessionRequest> session(StreamObserver<SessionResponse> out) {
            return new StreamObserver<>() {
                private boolean ended;

                @Override
                public synchronized void onNext(SessionRequest q) {
                    sessionRequests.add(new Received(q, System.nanoTime()));
                    switch (q.getOpCase()) {
                        case OPEN -> {
                            if (openFailure != null) {
                                ended = true;
                                out.onError(openFailure.asRuntimeException());
                                return;
                            }
                            long timeout = q.getOpen().getClientTimeoutMs();
                            out.onNext(SessionResponse.newBuilder().setOpened(SessionOpened.newBuilder()
                                    .setClientId("c-1").setClientTimeoutMs(timeout == 0 ? 2_000 : timeout)).build());
                        }
                        case SUBSCRIBE -> {
                            if (q.getSubscribe().getRoom().equals("bad")) {
                                out.onNext(SessionResponse.newBuilder().setReply(SessionReply.newBuilder()
                                        .setRequestId(q.getRequestId()).setOutcome("INVALID_ARGUMENT")
                                        .setError("room 'bad' is not allowed")).build());
                                return;
                            }
                            reply(q, "SUBSCRIBED", true);
                            String room = q.getSubscribe().getRoom();
                            boolean sync = q.getSubscribe().getMode() == SubscriptionMode.SYNC;
                            for (RoomDelivery d : queued.getOrDefault(room, List.of())) {
                                deliveredAt.put(d.getMessageId(), System.nanoTime());
                                out.onNext(SessionResponse.newBuilder()
                                        .setDelivery(d.toBuilder().setAckable(sync && !d.getOob())).build());
                            }
                            EjectReason ejection = ejections.get(room);
                            if (ejection != null) {
                                out.onNext(SessionResponse.newBuilder().setEjected(
                                        RoomEjected.newBuilder().setRoom(room).setReason(ejection)).build());
                            }
                        }
                        case ACK -> reply(q, "ACKED", true);
                        default -> reply(q, "OK", true);
                    }
                }

                private void reply(SessionRequest q, String outcome, boolean ok) {
                    out.onNext(SessionResponse.newBuilder().setReply(SessionReply.newBuilder()
                            .setRequestId(q.getRequestId()).setOutcome(outcome).setOk(ok)).build());
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public synchronized void onCompleted() {
                    if (!ended) {
                        ended = true;
                        out.onCompleted();
                    }
                }
            };
        }

        @Override
        public void send(RoomSendRequest q, StreamObserver<RoomSendResponse> o) {
            if (!refused(q, q.getRoom(), o)) {
                answer(o, RoomSendResponse.newBuilder().setMessageId("m-" + sequence.incrementAndGet()).build());
            }
        }

        @Override
        public void sendOutOfBand(RoomSendRequest q, StreamObserver<RoomSendOutOfBandResponse> o) {
            if (!refused(q, q.getRoom(), o)) {
                answer(o, RoomSendOutOfBandResponse.newBuilder()
                        .setMessageId("o-" + sequence.incrementAndGet()).setRecipients(2).build());
            }
        }

        @Override
        public void peek(RoomPeekRequest q, StreamObserver<RoomPeekResponse> o) {
            if (!refused(q, q.getRoom(), o)) {
                answer(o, RoomPeekResponse.newBuilder().addAllMessages(pending).build());
            }
        }

        @Override
        public void state(RoomStateRequest q, StreamObserver<RoomState> o) {
            if (!refused(q, q.getRoom(), o)) {
                answer(o, state.toBuilder().setRoom(q.getRoom()).build());
            }
        }

        @Override
        public void list(io.hourglass.api.v1.RoomListRequest q, StreamObserver<io.hourglass.api.v1.RoomListResponse> o) {
            if (!refused(q, "", o)) {
                answer(o, io.hourglass.api.v1.RoomListResponse.newBuilder().addAllRooms(listed).build());
            }
        }

        @Override
        public void metrics(RoomMetricsRequest q, StreamObserver<RoomMetricsResponse> o) {
            if (!refused(q, "", o)) {
                answer(o, metrics);
            }
        }

        @Override
        public void configure(RoomConfigureRequest q, StreamObserver<RoomConfigureResponse> o) {
            if (!refused(q, q.getRoom(), o)) {
                answer(o, RoomConfigureResponse.getDefaultInstance());
            }
        }

        private boolean refused(Message q, String room, StreamObserver<?> o) {
            unaryRequests.add(q);
            if (room.equals("bad")) {
                o.onError(Status.INVALID_ARGUMENT.withDescription("room 'bad' is not allowed").asRuntimeException());
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
