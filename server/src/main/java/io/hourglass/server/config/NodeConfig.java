package io.hourglass.server.config;

import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.config.LimitsConfig;
import io.hourglass.core.config.RoomsConfig;
import io.hourglass.core.config.Settings;
import io.hourglass.raft.RaftConfig;
import java.nio.file.Path;

/**
 * Everything a node is configured with, one typed record per component. The node's own keys are
 * declared below; {@link KnownKeys} lists every key.
 *
 * @param dataDir {@link #DATA_DIR}, resolved against the working directory
 * @param host {@link #HOST}
 * @param bindHost {@link #BIND_HOST}
 * @param grpcPort {@link #GRPC_PORT}
 * @param httpPort {@link HttpConfig#PORT}
 * @param security {@link SecurityConfig}
 * @param publishEntriesInFlight {@link RaftKeys#PUBLISH_ENTRIES_IN_FLIGHT}
 * @param warmUp {@link RaftKeys#WARM_UP}
 * @param shards {@link RaftKeys#SHARDS}: the cluster's event shard count
 * @param metadataGroup {@link RaftKeys#METADATA_GROUP}: whether a new cluster gets a metadata group
 */
public record NodeConfig(Path dataDir, String host, String bindHost, int grpcPort, int httpPort, RaftConfig raft,
                         DeliveryConfig delivery, LimitsConfig limits, RoomsConfig rooms, GrpcConfig grpc,
                         HttpConfig http, SecurityConfig security, int publishEntriesInFlight, boolean warmUp,
                         int shards, boolean metadataGroup, Settings settings) {
    public static final ConfigKey<String> ID = ConfigKey.string(
            "node.id", "n1",
            "This node's id; in a cluster, one of the ids in cluster.peers. (--node-id)");
    public static final ConfigKey<String> DATA_DIR = ConfigKey.string(
            "node.dataDir", "data",
            "Data directory: RocksDB in db/, the Raft log in ratis/. Relative paths are resolved against the "
                    + "working directory of the process. (--data-dir)");
    public static final ConfigKey<Integer> MIN_FREE_DISK_MB = ConfigKey.integer(
            "node.minFreeDiskMb", RaftConfig.DEFAULT_MIN_FREE_DISK_MB, 0, Integer.MAX_VALUE,
            "Free space (MiB) the file system of the data directory must keep. With less, the node does not "
                    + "start, and a running node stops (an ERROR naming the directory, exit status 70) before a write "
                    + "fails half-way; its supervisor starts it again, which succeeds once space is freed. Ratis "
                    + "preallocates log segments (4 MiB at a time) and RocksDB writes whole memtables (64 MiB): keep "
                    + "more than that. 0 turns the check off (a write failing with ENOSPC still stops the node).");
    public static final ConfigKey<String> HOST = ConfigKey.string(
            "node.host", "127.0.0.1",
            "The address other nodes and clients use to reach this node. (--host)");
    public static final ConfigKey<String> BIND_HOST = ConfigKey.string(
            "node.bindHost", "0.0.0.0",
            "The interface the gRPC and HTTP servers listen on.");
    public static final ConfigKey<Integer> GRPC_PORT = ConfigKey.integer(
            "grpc.port", 7070, 0, 65_535,
            "Client gRPC API port. (--grpc-port)");

    public static NodeConfig from(Settings s) {
        Path dataDir = Path.of(DATA_DIR.read(s)).toAbsolutePath();
        SecurityConfig security = SecurityConfig.from(s);
        RaftConfig raft = RaftKeys.read(s, ID.read(s), dataDir, security.peerTls());
        HttpConfig http = HttpConfig.from(s);
        return new NodeConfig(dataDir, HOST.read(s), BIND_HOST.read(s), GRPC_PORT.read(s), http.port(), raft,
                DeliveryConfig.from(s), LimitsConfig.from(s), RoomsConfig.from(s), GrpcConfig.from(s), http, security,
                RaftKeys.PUBLISH_ENTRIES_IN_FLIGHT.read(s), RaftKeys.WARM_UP.read(s), RaftKeys.SHARDS.read(s),
                RaftKeys.METADATA_GROUP.read(s), s);
    }
}
