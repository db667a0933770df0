package io.hourglass.server.grpc;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.hourglass.server.config.GrpcConfig;
import java.net.InetSocketAddress;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The client gRPC port's transport settings ({@link GrpcConfig}): a bounded executor for every call,
 * a cap on concurrent streams per connection, keepalive in both directions and an idle-connection
 * limit; a domain exception a unary handler throws becomes its status ({@link ErrorStatusInterceptor}),
 * and every reply's status description is bounded ({@link BoundedStatusInterceptor}).
 * Services are added by the composition root.
 */
public final class ClientPort {
    private ClientPort() {
    }

    /**
     * @param executor the bounded pool that runs every call of the port ({@code grpc.executorThreads})
     * @param maxInboundBytes the largest request message
     */
    public static NettyServerBuilder builder(String bindHost, int port, GrpcConfig config, Executor executor,
                                             int maxInboundBytes) {
        return NettyServerBuilder.forAddress(new InetSocketAddress(bindHost, port))
                .executor(executor)
                .maxInboundMessageSize(maxInboundBytes)
                .maxConcurrentCallsPerConnection(config.maxConcurrentStreams())
                .keepAliveTime(config.keepAliveTime().toMillis(), TimeUnit.MILLISECONDS)
                .keepAliveTimeout(config.keepAliveTimeout().toMillis(), TimeUnit.MILLISECONDS)
                .permitKeepAliveTime(config.permitKeepAliveTime().toMillis(), TimeUnit.MILLISECONDS)
                .permitKeepAliveWithoutCalls(true)
                .maxConnectionIdle(config.maxConnectionIdle().toMillis(), TimeUnit.MILLISECONDS)
                // The last interceptor added runs first: bounding wraps the call the mapping closes.
                .intercept(new ErrorStatusInterceptor())
                .intercept(new BoundedStatusInterceptor());
    }
}
