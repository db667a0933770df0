package io.hourglass.chaos;

import io.hourglass.testing.TestPorts;

/**
 * Where one node listens: its host address and three ports, fixed for its lifetime so that
 * restarts keep its address.
 *
 * @param host the address the node binds and advertises: loopback, or its network namespace's
 */
public record NodePorts(String host, int grpc, int raft, int http) {
    public static final String LOOPBACK = "127.0.0.1";

    /** Three loopback ports no other node of this JVM was given, below the ephemeral range ({@link TestPorts}). */
    public static NodePorts allocate() {
        return new NodePorts(LOOPBACK, TestPorts.next(), TestPorts.next(), TestPorts.next());
    }

    /** The server defaults 7070/7071/7072 on {@code host}: for a node alone on its address. */
    public static NodePorts defaultsOn(String host) {
        return new NodePorts(host, 7070, 7071, 7072);
    }

    public String grpcAddress() {
        return host + ":" + grpc;
    }

    /** The {@code --peers} entry of this node: {@code id=host:raftPort:grpcPort}. */
    public String peerEntry(String nodeId) {
        return nodeId + "=" + host + ":" + raft + ":" + grpc;
    }
}
