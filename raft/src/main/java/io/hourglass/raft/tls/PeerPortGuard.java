package io.hourglass.raft.tls;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.cert.Certificate;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.apache.ratis.thirdparty.io.grpc.Grpc;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallHandler;
import org.apache.ratis.thirdparty.io.grpc.ServerInterceptor;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.ClientAuth;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContextBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who may talk to the Raft port (replication, this node's Raft client, the checkpoint download):
 * only a caller presenting a certificate the peer CA signed.
 *
 * <p>With TLS asked to <em>require</em> a certificate, a caller that presents none is cut off inside
 * the handshake, where neither the trust manager nor gRPC tells us who it was. So the port's TLS asks
 * for a certificate ({@code OPTIONAL}): one presented is still checked by {@link PemTls}'s trust
 * manager (a foreign one fails the handshake and is logged with its subject), and a caller that
 * presented none gets through TLS only to have every call refused here with {@code UNAUTHENTICATED},
 * logged with its address. Refusals are logged at WARN once per address per minute, and counted.
 */
public final class PeerPortGuard implements ServerInterceptor {
    private static final Logger LOG = LoggerFactory.getLogger(PeerPortGuard.class);
    static final long LOG_EVERY_MS = 60_000;
    private static final int MAX_REMEMBERED = 1024;

    private final String nodeId;
    private final LongSupplier clockMs;
    private final AtomicLong refused = new AtomicLong();
    private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

    public PeerPortGuard(String nodeId, LongSupplier clockMs) {
        this.nodeId = nodeId;
        this.clockMs = clockMs;
    }

    /** Applies the guard to a Raft port's server: its TLS context and the interceptor. */
    public NettyServerBuilder apply(NettyServerBuilder builder, PemTls material) {
        try {
            return builder.sslContext(serverContext(material)).intercept(this);
        } catch (SSLException e) {
            throw new IllegalStateException("peer TLS: cannot build the Raft port's TLS context: " + e.getMessage(), e);
        }
    }

    private static SslContext serverContext(PemTls material) throws SSLException {
        return GrpcSslContexts.configure(SslContextBuilder.forServer(material.keyManager()))
                .protocols("TLSv1.3", "TLSv1.2")
                .trustManager(material.trustManager())
                .clientAuth(ClientAuth.OPTIONAL)
                .build();
    }

    /** Calls refused for want of a peer certificate, since start. */
    public long refused() {
        return refused.get();
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                      ServerCallHandler<Q, R> next) {
        if (presentedCertificate(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION))) {
            return next.startCall(call, headers);
        }
        refused.incrementAndGet();
        SocketAddress from = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        logRefusal(from, call.getMethodDescriptor().getFullMethodName());
        call.close(Status.UNAUTHENTICATED.withDescription("the Raft port of " + nodeId
                + " admits only cluster nodes: present a certificate signed by the peer CA"), new Metadata());
        return new ServerCall.Listener<>() {
        };
    }

    private static boolean presentedCertificate(SSLSession session) {
        if (session == null) {
            return false;
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            return chain != null && chain.length > 0;
        } catch (SSLPeerUnverifiedException e) {
            return false;
        }
    }

    private void logRefusal(SocketAddress from, String method) {
        String host = from instanceof InetSocketAddress a ? a.getHostString() : String.valueOf(from);
        long now = clockMs.getAsLong();
        Long last = lastLogged.get(host);
        if (last != null && now - last < LOG_EVERY_MS) {
            return;
        }
        if (lastLogged.size() >= MAX_REMEMBERED) {
            lastLogged.clear();
        }
        lastLogged.put(host, now);
        LOG.warn("peer TLS: {} refused {} from {}: it presented no certificate (refusals from one address are "
                + "logged once a minute; {} refused since start)", nodeId, method, from, refused.get());
    }
}
