package io.hourglass.client;

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
}
