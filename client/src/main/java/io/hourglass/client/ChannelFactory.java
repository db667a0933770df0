package io.hourglass.client;

import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;

/**
 * Opens the gRPC channel to one server. The client calls it once per configured server and
 * owns (and shuts down) every channel it returns. Tests pass a factory that returns in-process
 * channels.
 */
@FunctionalInterface
public interface ChannelFactory {
    ManagedChannel open(ServerAddress address);

    /** Plaintext HTTP/2 over TCP, the transport an Hourglass node serves by default. */
    static ChannelFactory plaintext() {
        return address -> ManagedChannelBuilder.forAddress(address.host(), address.port())
                .usePlaintext()
                .build();
    }

    /** TLS and/or a bearer token as {@code credentials} say ({@link ClientCredentials#NONE}: plain text). */
    static ChannelFactory secured(ClientCredentials credentials) {
        if (credentials.equals(ClientCredentials.NONE)) {
            return plaintext();
        }
        var channelCredentials = credentials.channelCredentials();
        return address -> Grpc.newChannelBuilderForAddress(address.host(), address.port(), channelCredentials).build();
    }
}
