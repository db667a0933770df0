package io.hourglass.server.config;

import io.hourglass.core.config.Settings;

/**
 * The node-to-node checkpoint service, on a port of its own so that clients never reach it.
 *
 * @param port {@code replica.port} (raft.port + 2, so 7073 by default): where this node serves checkpoints to
 *        followers that install one.
 *        Peers find it as the optional fourth field of their {@code cluster.peers} entry
 *        ({@code id=host:raftPort:grpcPort:replicaPort}), or else at their Raft port + 2 (7071 → 7073)
 * @param maxConcurrentDownloads {@code replica.maxConcurrentDownloads} (2, 1 to 64): checkpoints served at
 *        once; a follower asking beyond it is told UNAVAILABLE and retries
 */
public record ReplicaConfig(int port, int maxConcurrentDownloads) {
    public static final ReplicaConfig DEFAULTS = new ReplicaConfig(7073, 2);
    /** Where a peer's replica port is when its {@code cluster.peers} entry does not say: its Raft port + this. */
    public static final int DEFAULT_OFFSET_FROM_RAFT_PORT = 2;

    /** @param raftPort this node's Raft port: the replica port's default follows it */
    public static ReplicaConfig from(Settings s, int raftPort) {
        int defaultPort = raftPort == 0 ? 0 : raftPort + DEFAULT_OFFSET_FROM_RAFT_PORT;
        return new ReplicaConfig(s.integer("replica.port", defaultPort, 0, 65_535),
                s.integer("replica.maxConcurrentDownloads", DEFAULTS.maxConcurrentDownloads, 1, 64));
    }
}
