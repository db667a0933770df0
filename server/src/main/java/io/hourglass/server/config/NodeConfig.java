package io.hourglass.server.config;

import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.config.LimitsConfig;
import io.hourglass.core.config.RoomsConfig;
import io.hourglass.core.config.Settings;
import io.hourglass.raft.RaftConfig;
import java.nio.file.Path;

/**
 * Everything a node is configured with, one typed record per component.
 *
 * @param dataDir {@code node.dataDir} (./data): RocksDB in {@code db/}, the Raft log in {@code ratis/}
 * @param host {@code node.host} (127.0.0.1): the address other nodes and clients reach this one at
 * @param bindHost {@code node.bindHost} (0.0.0.0): the interface the gRPC and HTTP servers listen on
 * @param grpcPort {@code grpc.port} (7070): client API
 * @param httpPort {@code http.port} (7072): {@code /metrics}, {@code /healthz}, {@code /readyz}
 */
public record NodeConfig(Path dataDir, String host, String bindHost, int grpcPort, int httpPort, RaftConfig raft,
                         DeliveryConfig delivery, LimitsConfig limits, RoomsConfig rooms, GrpcConfig grpc,
                         HttpConfig http, Settings settings) {

    public static NodeConfig from(Settings s) {
        Path dataDir = Path.of(s.string("node.dataDir", "data")).toAbsolutePath();
        int grpcPort = s.integer("grpc.port", 7070, 0, 65_535);
        RaftConfig raft = RaftConfig.from(s, dataDir, grpcPort);
        HttpConfig http = HttpConfig.from(s);
        return new NodeConfig(dataDir, s.string("node.host", "127.0.0.1"), s.string("node.bindHost", "0.0.0.0"),
                grpcPort, http.port(), raft, DeliveryConfig.from(s), LimitsConfig.from(s),
                RoomsConfig.from(s), GrpcConfig.from(s), http, s);
    }
}
