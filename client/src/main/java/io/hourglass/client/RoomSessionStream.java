package io.hourglass.client;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.hourglass.api.v1.RoomsGrpc;
import io.hourglass.api.v1.SessionOpen;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionResponse;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code Rooms.Session} call: sends {@code open} and the session's requests, passes what the
 * server pushes to its {@link Listener}. A reconnect creates a new instance, and the server gives
 * it a new client id.
 *
 * <p>Inbound flow control is gRPC's automatic one: the lock-step gate already bounds SYNC
 * deliveries, and replies must never wait behind unhandled deliveries (a handler may block on an
 * ack's reply). Thread-safety: outbound frames are written under {@code lock} (a gRPC call must
 * not be written concurrently); inbound callbacks come serially from gRPC.
 */
final class RoomSessionStream implements ClientResponseObserver<SessionRequest, SessionResponse>, StallWatch.Watched {
    private static final Logger LOG = LoggerFactory.getLogger(RoomSessionStream.class);

    /** What the stream reports to its {@link RoomSession}; called on gRPC threads, serially. */
    interface Listener {
        /** {@code shards}: the cluster's event shard count, 0 from a server older than shards. */
        void onOpened(RoomSessionStream stream, String clientId, long clientTimeoutMs, int shards);

        void onMessage(RoomSessionStream stream, ReceivedRoomMessage message);

        void onEjected(RoomSessionStream stream, RoomEjection ejection);

        /** {@code error}: the server's explanation of an {@code INVALID_ARGUMENT} outcome, else empty. */
        void onReply(RoomSessionStream stream, long requestId, RoomReply reply, String error);

        /** The call ended: {@code Status.OK} if the server completed it. Called once. */
        void onEnded(RoomSessionStream stream, Status status);
    }

    private final ServerPool.Endpoint endpoint;
    private final Listener listener;
    private final CompletableFuture<Status> ended = new CompletableFuture<>();
    private volatile String leaderHint;
    private final long sinceNanos = System.nanoTime();
    /** Set when the server stopped answering ({@link StallWatch}): the stream ends as UNAVAILABLE then. */
    private volatile boolean stalled;

    private final Object lock = new Object();
    // Guarded by lock.
    private ClientCallStreamObserver<SessionRequest> call;
    private boolean writable = true;

    RoomSessionStream(ServerPool.Endpoint endpoint, Listener listener) {
        this.endpoint = endpoint;
        this.listener = listener;
    }

    /**
     * Opens the call and sends {@code open} for the rooms of {@code shard}; {@code clientTimeoutMs} 0
     * asks for the server's default.
     */
    void start(long clientTimeoutMs, int shard) {
        RoomsGrpc.newStub(endpoint.channel()).session(this);
        send(SessionRequest.newBuilder()
                .setOpen(SessionOpen.newBuilder().setClientTimeoutMs(clientTimeoutMs).setShard(shard))
                .build());
    }

    @Override
    public ServerPool.Endpoint endpoint() {
        return endpoint;
    }

    @Override
    public long sinceNanos() {
        return sinceNanos;
    }

    /** The server stopped answering while the connection stays open: end the stream, so that it reconnects elsewhere. */
    @Override
    public void stalled() {
        stalled = true;
        cancel("server " + endpoint.address() + " stopped answering");
    }

    /** The leader a refusing follower named in its trailers, or null. */
    String leaderHint() {
        return leaderHint;
    }

    /** Completes with the final status when the call has ended. */
    CompletableFuture<Status> ended() {
        return ended;
    }

    /** Sends a frame if the call is still writable; returns whether it was sent. */
    boolean send(SessionRequest request) {
        synchronized (lock) {
            if (!writable) {
                return false;
            }
            try {
                call.onNext(request);
                return true;
            } catch (RuntimeException e) {
                LOG.debug("could not send on session stream to {}: {}", endpoint.address(), e.toString());
                return false;
            }
        }
    }

    /** Ends our side; the server processes what was sent, then completes the call. */
    void halfClose() {
        synchronized (lock) {
            if (writable) {
                writable = false;
                call.onCompleted();
            }
        }
    }

    void cancel(String reason) {
        ClientCallStreamObserver<SessionRequest> c;
        synchronized (lock) {
            writable = false;
            c = call;
        }
        c.cancel(reason, null);
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<SessionRequest> requestStream) {
        synchronized (lock) {
            this.call = requestStream;
        }
    }

    @Override
    public void onNext(SessionResponse response) {
        switch (response.getEventCase()) {
            case OPENED -> listener.onOpened(this, response.getOpened().getClientId(),
                    response.getOpened().getClientTimeoutMs(), response.getOpened().getShards());
            case DELIVERY -> listener.onMessage(this, RoomCodec.fromProto(response.getDelivery()));
            case EJECTED -> listener.onEjected(this, RoomCodec.fromProto(response.getEjected()));
            case REPLY -> listener.onReply(this, response.getReply().getRequestId(),
                    new RoomReply(response.getReply().getOutcome(), response.getReply().getOk()),
                    response.getReply().getError());
            default -> LOG.debug("ignoring unknown session event from {}", endpoint.address());
        }
    }

    @Override
    public void onError(Throwable t) {
        Metadata trailers = Status.trailersFromThrowable(t);
        if (trailers != null) {
            leaderHint = trailers.get(ConsumerStream.LEADER_KEY);
        }
        end(Status.fromThrowable(t));
    }

    @Override
    public void onCompleted() {
        end(Status.OK);
    }

    private void end(Status ending) {
        Status status = stalled
                ? Status.UNAVAILABLE.withDescription("server " + endpoint.address() + " stopped answering")
                : ending;
        synchronized (lock) {
            writable = false;
        }
        ended.complete(status);
        listener.onEnded(this, status);
    }
}
