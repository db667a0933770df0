package io.hourglass.chaos;

import io.hourglass.testing.TestPorts;

/** The three ports of one node, fixed for its lifetime so that restarts keep its address. */
public record NodePorts(int grpc, int raft, int http) {

    /** Three ports no other node of this JVM was given, below the ephemeral range ({@link TestPorts}). */
    public static NodePorts allocate() {
        return new NodePorts(TestPorts.next(), TestPorts.next(), TestPorts.next());
    }

    public String grpcAddress() {
        return "127.0.0.1:" + grpc;
    }
}
