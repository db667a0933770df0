package io.hourglass.server;

import io.hourglass.core.config.ConfigKey;
import io.hourglass.server.config.HttpConfig;
import io.hourglass.server.config.NodeConfig;
import io.hourglass.server.config.RaftKeys;
import java.util.ListResourceBundle;

/**
 * The help of {@code hourglass-server}'s flags that set a config key (picocli reads it as the command's
 * resource bundle, by option name), each ending with the key's declared default so that --help cannot drift
 * from the declarations.
 */
public final class FlagHelp extends ListResourceBundle {
    @Override
    protected Object[][] getContents() {
        return new Object[][] {
            {"node-id", "this node's id" + orDefault(NodeConfig.ID)},
            {"data-dir", "data directory" + orDefault(NodeConfig.DATA_DIR)},
            {"host", "address other nodes and clients use for this node" + orDefault(NodeConfig.HOST)},
            {"grpc-port", "client gRPC port" + orDefault(NodeConfig.GRPC_PORT)},
            {"raft-port", "Raft port" + orDefault(RaftKeys.PORT)},
            {"http-port", "metrics and health port" + orDefault(HttpConfig.PORT)},
            {"peers", "every voter: id=host:raftPort:grpcPort,... (default: standalone)"},
        };
    }

    private static String orDefault(ConfigKey<?> key) {
        return " (" + key.name() + ", default " + key.defaultText() + ")";
    }
}
