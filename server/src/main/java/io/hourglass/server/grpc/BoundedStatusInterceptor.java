package io.hourglass.server.grpc;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * Bounds the description of every status a service closes a call with ({@link StatusMapper#bounded}),
 * whichever service and code path produced it: the guarantee that no reply echoes a client's
 * oversized input back into a response header sits here, once, not in each error message. For the
 * same reason the error details of an exceeded limit are added here ({@link StatusMapper#closing}):
 * limits are refused on many paths, streams and unary calls alike, and every one closes through here.
 */
public final class BoundedStatusInterceptor implements ServerInterceptor {
    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                        ServerCallHandler<Q, R> next) {
        return next.startCall(new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void close(Status status, Metadata trailers) {
                super.close(StatusMapper.closing(status, trailers), trailers);
            }
        }, headers);
    }
}
