package io.hourglass.server.grpc;

import io.grpc.BindableService;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.hourglass.raft.tls.PemTls;
import io.hourglass.server.config.SecurityConfig;
import javax.net.ssl.SSLException;
import io.hourglass.server.config.GrpcConfig;
import java.net.InetSocketAddress;
import java.util.List;
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
     * @param tls the port's TLS context ({@link #serverTls}), or null for plain text
     */
    public static NettyServerBuilder builder(String bindHost, int port, GrpcConfig config, Executor executor,
                                             int maxInboundBytes, SslContext tls) {
        NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress(bindHost, port));
        if (tls != null) {
            builder.sslContext(tls);
        }
        return builder
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

    /**
     * Server reflection, which lists the port's services and serves their schemas to tools such as
     * {@code grpcurl}: {@code grpc.reflection.v1}, and the {@code v1alpha} that older tools still ask for.
     * With security on it needs credentials like any call ({@code AuthInterceptor}).
     */
    @SuppressWarnings("deprecation") // the v1alpha service: deprecated upstream in favour of v1, kept for older tools
    public static List<BindableService> reflection() {
        return List.of(ProtoReflectionServiceV1.newInstance(), ProtoReflectionService.newInstance());
    }

    /**
     * The client port's TLS: TLS 1.3 or 1.2 with the node's certificate; client certificates asked
     * for or required as {@code clientAuth} says, checked against the material's CA.
     */
    public static SslContext serverTls(PemTls material, SecurityConfig.ClientAuth clientAuth) throws SSLException {
        SslContextBuilder b = GrpcSslContexts.configure(SslContextBuilder.forServer(material.keyManager()))
                .protocols("TLSv1.3", "TLSv1.2");
        if (clientAuth != SecurityConfig.ClientAuth.NONE) {
            b.trustManager(material.trustManager())
                    .clientAuth(clientAuth == SecurityConfig.ClientAuth.REQUIRE ? ClientAuth.REQUIRE : ClientAuth.OPTIONAL);
        }
        return b.build();
    }
}
