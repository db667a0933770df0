package io.hourglass.raft;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;

/**
 * One channel per peer to its Raft port, for the services Hourglass serves there next to Ratis'
 * own (clock readings, log ends), with the peer TLS when it is on. Thread-safe.
 */
final class PeerChannels implements AutoCloseable {
    private final Function<String, String> raftAddressOf;
    private final SslContext tls;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

    /** @param tls the client side of the peer TLS, or null for plain text */
    PeerChannels(Function<String, String> raftAddressOf, SslContext tls) {
        this.raftAddressOf = raftAddressOf;
        this.tls = tls;
    }

    /** The channel to {@code peer}'s Raft port, or null while its address is unknown. */
    ManagedChannel of(String peer) {
        ManagedChannel known = channels.get(peer);
        if (known != null) {
            return known;
        }
        String address = raftAddressOf.apply(peer);
        if (address == null) {
            return null;
        }
        return channels.computeIfAbsent(peer, p -> {
            NettyChannelBuilder b = NettyChannelBuilder.forTarget(address);
            return (tls == null ? b.usePlaintext() : b.sslContext(tls)).build();
        });
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
