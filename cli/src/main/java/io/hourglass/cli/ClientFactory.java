package io.hourglass.cli;

import io.hourglass.client.HourglassClient;

/**
 * Builds the client a command talks through, from a builder the command has already set up
 * (servers from {@code --servers}, retry deadline from {@code --deadline}, batching). The real
 * factory just builds it; tests add an in-process channel factory first.
 */
@FunctionalInterface
public interface ClientFactory {
    HourglassClient open(HourglassClient.Builder configured);

    /** Plaintext gRPC over TCP to the configured servers. */
    static ClientFactory grpc() {
        return HourglassClient.Builder::build;
    }
}
