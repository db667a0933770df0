package io.hourglass.raft;

import io.hourglass.raft.tls.PeerPortGuard;
import io.hourglass.raft.tls.PemTls;
import java.io.IOException;
import java.util.List;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.grpc.server.GrpcServices;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.ServerTransportFilter;
import org.apache.ratis.thirdparty.io.grpc.netty.GrpcSslContexts;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyServerBuilder;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;

/**
 * How this node's Raft port and its Raft clients talk: the peer mutual TLS (when configured) on
 * every Raft channel (replication, this node's client and admin calls) and on the checkpoint and
 * clock calls, which are served on the same port, so they are exactly as reachable, and as
 * protected, as replication itself. With peer TLS, {@link PeerPortGuard} takes over the port's TLS
 * so a caller presenting no certificate is refused and logged by address, not dropped silently
 * inside the handshake.
 */
final class PeerTransport implements AutoCloseable {
    /** What every Raft server and client of this node is built with. */
    final Parameters parameters = new Parameters();
    /** The peer TLS material, or null for plain text. */
    private final PemTls tls;
    /** For this node's own calls to its peers' extra services; null for plain text. */
    final SslContext clientTls;
    final PeerPortGuard guard;
    /** Channels to the peers' Raft ports, for the services served next to Ratis' own. */
    final PeerChannels peers;
    /** Install notifications sent again to followers stuck in an install ({@link InstallNudgingAppender}). */
    final java.util.concurrent.atomic.AtomicLong installNudges = new java.util.concurrent.atomic.AtomicLong();

    /** @param raftAddressOf a peer's Raft address by id (asked only once the node runs) */
    PeerTransport(RaftConfig config, java.util.function.Function<String, String> raftAddressOf) throws IOException {
        this.tls = config.peerTls() == null ? null : new PemTls("peer", config.peerTls().certFile(),
                config.peerTls().keyFile(), config.peerTls().caFile(), config.peerTls().reloadEvery(), true);
        this.guard = new PeerPortGuard(config.nodeId(), System::currentTimeMillis);
        parameters.put(InstallNudgingAppender.NUDGES, installNudges, java.util.concurrent.atomic.AtomicLong.class);
        if (tls != null) {
            GrpcConfigKeys.TLS.setConf(parameters, new GrpcTlsConfig(tls.keyManager(), tls.trustManager(), true));
            this.clientTls = GrpcSslContexts.forClient().keyManager(tls.keyManager()).trustManager(tls.trustManager()).build();
        } else {
            this.clientTls = null;
        }
        this.peers = new PeerChannels(raftAddressOf, clientTls);
    }

    /**
     * Serves {@code services} next to Ratis' own on the Raft port; {@code filter} hears of the
     * transports that carried a leader's appends closing ({@link AppendTransports}).
     */
    void serve(ServerTransportFilter filter, List<ServerServiceDefinition> services) {
        GrpcConfigKeys.Server.setServicesCustomizer(parameters, (builder, types) -> {
            AppendTransports appends = new AppendTransports(filter);
            NettyServerBuilder b = (tls == null ? builder : guard.apply(builder, tls)).addTransportFilter(appends)
                    .intercept(appends);
            if (types.contains(GrpcServices.Type.SERVER)) {
                services.forEach(b::addService);
            }
            return b;
        });
    }

    @Override
    public void close() {
        peers.close();
        if (tls != null) {
            tls.close();
        }
    }
}
