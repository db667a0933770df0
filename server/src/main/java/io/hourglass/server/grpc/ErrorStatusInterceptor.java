package io.hourglass.server.grpc;

import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes a call whose handler threw with the status {@link StatusMapper#toStatus} gives the exception,
 * so a handler refuses a request by throwing a domain exception ({@code NotFoundException}, ...) and
 * needs no try/catch just to map it. Without this, gRPC would end such a call with
 * {@code UNKNOWN: Application error processing RPC} and the reason would be lost.
 *
 * <p>Only calls where the client sends one message (unary and server streaming): their handler runs
 * when the request is complete, on the call's thread. A client or bidi stream ({@code SubscribeSession},
 * {@code RoomSession}) owns its status and ends itself.
 *
 * <p>An exception escaping after the handler already closed the call is logged and dropped: the
 * client has its answer, and a second close would throw.
 */
public final class ErrorStatusInterceptor implements ServerInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(ErrorStatusInterceptor.class);

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                        ServerCallHandler<Q, R> next) {
        if (!call.getMethodDescriptor().getType().clientSendsOneMessage()) {
            return next.startCall(call, headers);
        }
        CloseOnce<Q, R> once = new CloseOnce<>(call);
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(next.startCall(once, headers)) {
            @Override
            public void onHalfClose() {
                try {
                    super.onHalfClose();
                } catch (RuntimeException e) {
                    once.fail(e);
                }
            }
        };
    }

    /** The call, closed at most once whichever of the handler and {@link #fail} comes first. */
    private static final class CloseOnce<Q, R> extends ForwardingServerCall.SimpleForwardingServerCall<Q, R> {
        private final AtomicBoolean closed = new AtomicBoolean();

        CloseOnce(ServerCall<Q, R> call) {
            super(call);
        }

        @Override
        public void close(Status status, Metadata trailers) {
            if (closed.compareAndSet(false, true)) {
                super.close(status, trailers);
            }
        }

        void fail(RuntimeException error) {
            if (closed.get()) {
                LOG.warn("{} threw after it had answered", getMethodDescriptor().getFullMethodName(), error);
                return;
            }
            StatusRuntimeException s = StatusMapper.toStatus(error);
            close(s.getStatus(), s.getTrailers() == null ? new Metadata() : s.getTrailers());
        }
    }
}
