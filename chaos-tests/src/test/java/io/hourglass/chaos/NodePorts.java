package io.hourglass.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** The three ports of one node, fixed for its lifetime so that restarts keep its address. */
public record NodePorts(int grpc, int raft, int http) {

    /**
     * Picks three distinct ports free on loopback right now. Another process may take one before
     * the node binds it; the node then fails to start and the test says so, with the node's log.
     */
    public static NodePorts allocate() {
        try (ServerSocket a = bind(); ServerSocket b = bind(); ServerSocket c = bind()) {
            return new NodePorts(a.getLocalPort(), b.getLocalPort(), c.getLocalPort());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find free ports", e);
        }
    }

    private static ServerSocket bind() throws IOException {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        s.setReuseAddress(true);
        return s;
    }

    public String grpcAddress() {
        return "127.0.0.1:" + grpc;
    }
}
