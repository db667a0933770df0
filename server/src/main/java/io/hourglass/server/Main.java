package io.hourglass.server;

import io.hourglass.core.HourglassException;
import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.Settings;
import io.hourglass.raft.disk.CorruptRaftLogException;
import io.hourglass.raft.disk.DiskFullException;
import io.hourglass.server.config.ConfigLoader;
import io.hourglass.server.config.HttpConfig;
import io.hourglass.server.config.KnownKeys;
import io.hourglass.server.config.NodeConfig;
import io.hourglass.server.config.RaftKeys;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hourglass-server}: starts one node and runs until SIGTERM/SIGINT, then stops it cleanly.
 * With no arguments it is a standalone node with its data in {@code ./data}.
 *
 * <p>Exit status: 0 after SIGTERM; 70 when the node stopped itself because its storage failed or its
 * disk is full, and when it does not start on a full disk (a supervisor restarts it: the next start
 * succeeds once the cause is gone); 65 when it does not start because its Raft log is damaged
 * (restarting cannot help: its data directory must be wiped, see {@code io.hourglass.raft.disk});
 * 2 for a configuration error; 1 otherwise.
 */
@Command(name = "hourglass-server", mixinStandardHelpOptions = true, sortOptions = false,
        resourceBundle = "io.hourglass.server.FlagHelp",
        description = {"Runs a Hourglass node.",
            "Precedence: " + ConfigLoader.PRECEDENCE})
public final class Main implements Callable<Integer> {
    @Option(names = "--config", description = "properties file (see conf/hourglass.properties)")
    Path config;
    @Option(names = "--node-id")
    String nodeId;
    @Option(names = "--data-dir")
    Path dataDir;
    @Option(names = "--host")
    String host;
    @Option(names = "--grpc-port")
    Integer grpcPort;
    @Option(names = "--raft-port")
    Integer raftPort;
    @Option(names = "--http-port")
    Integer httpPort;
    @Option(names = "--peers")
    String peers;
    @Option(names = "--join", description = "start empty and wait to be added with 'hourglass cluster add-node'")
    boolean join;

    private final CountDownLatch stopped = new CountDownLatch(1);
    /** Exit status when the node stopped itself because its store failed (EX_SOFTWARE). */
    static final int STORE_FAILED_EXIT = DiskFullException.EXIT_STATUS;

    public static void main(String[] args) {
        // gRPC, netty and Jetty pieces log through java.util.logging: into the node's log, not stderr.
        org.slf4j.bridge.SLF4JBridgeHandler.removeHandlersForRootLogger();
        org.slf4j.bridge.SLF4JBridgeHandler.install();
        int code = new CommandLine(new Main())
                .setExecutionExceptionHandler((ex, cmd, parsed) -> {
                    cmd.getErr().println("hourglass-server: " + ex.getMessage());
                    return exitStatus(ex);
                })
                .execute(args);
        if (code != 0) {
            System.exit(code);
        }
    }

    @Override
    public Integer call() throws Exception {
        Map<String, String> flags = new HashMap<>();
        put(flags, NodeConfig.ID, nodeId);
        put(flags, NodeConfig.DATA_DIR, dataDir);
        put(flags, NodeConfig.HOST, host);
        put(flags, NodeConfig.GRPC_PORT, grpcPort);
        put(flags, RaftKeys.PORT, raftPort);
        put(flags, HttpConfig.PORT, httpPort);
        put(flags, RaftKeys.PEERS, peers);
        if (join) {
            put(flags, RaftKeys.JOIN, true);
        }
        Settings settings = ConfigLoader.load(config, System.getenv(), flags);
        NodeConfig nodeConfig = NodeConfig.from(settings);
        // Before the first log line: the logging pattern prints the node id on every line.
        System.setProperty("hourglass.node.id", nodeConfig.raft().nodeId());
        Logger log = LoggerFactory.getLogger(Main.class);
        KnownKeys.unknown(settings.asMap().keySet()).forEach(log::warn);
        HourglassNode node = HourglassNode.start(nodeConfig, Clock.systemUTC());
        java.util.concurrent.atomic.AtomicBoolean asked = new java.util.concurrent.atomic.AtomicBoolean();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            asked.set(true);
            node.close();
            stopped.countDown();
        }, "hourglass-shutdown"));
        // A node also stops by itself when its store fails: then the process must end too (and say
        // so in its exit status), so that a supervisor restarts it instead of keeping a dead JVM.
        node.stopped().whenComplete((v, e) -> stopped.countDown());
        stopped.await();
        return asked.get() ? 0 : STORE_FAILED_EXIT;
    }

    /** The exit status of a node that could not start because of {@code failure} (see the class comment). */
    static int exitStatus(Throwable failure) {
        if (failure instanceof CorruptRaftLogException) {
            return CorruptRaftLogException.EXIT_STATUS;
        }
        if (failure instanceof DiskFullException) {
            return DiskFullException.EXIT_STATUS;
        }
        return failure instanceof HourglassException ? 2 : 1;
    }

    private static void put(Map<String, String> flags, ConfigKey<?> key, Object value) {
        if (value != null) {
            flags.put(key.name(), value.toString());
        }
    }
}
