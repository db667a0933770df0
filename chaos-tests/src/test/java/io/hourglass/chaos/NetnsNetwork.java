package io.hourglass.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Separate hosts on one machine: a network namespace per node on a shared bridge, made and cut by
 * the deploy module's {@code netns-cluster.sh} (its network-only commands), so that a test can
 * partition nodes from each other. Node {@code i} (1-based) gets its own address; the test JVM
 * reaches every node over the bridge, also while nodes are cut off each other.
 *
 * <p>Needs root and iproute2; {@link #unavailableReason()} says why a run cannot have it. Each
 * instance uses its own name prefix and subnet, so that it cannot collide with a user's
 * {@code netns-cluster.sh up} (prefix {@code hg}, 10.77.0) or another test JVM.
 */
public final class NetnsNetwork implements AutoCloseable {
    private static final long SCRIPT_TIMEOUT_S = 60;
    private static Optional<String> probed;

    private final Path script;
    private final Map<String, String> env;
    private final String prefix;
    private final String net;
    private final int size;
    private final Thread cleanup;
    private boolean closed;

    private NetnsNetwork(Path script, Map<String, String> env, String prefix, String net, int size) {
        this.script = script;
        this.env = env;
        this.prefix = prefix;
        this.net = net;
        this.size = size;
        // A test JVM killed mid-run must not leave namespaces, veths and a bridge behind.
        this.cleanup = new Thread(() -> {
            try {
                script("net-down");
            } catch (RuntimeException e) {
                System.err.println("could not remove " + this + ": " + e.getMessage());
            }
        }, "netns-cleanup-" + prefix);
    }

    /**
     * Why namespaces cannot be used here, or empty if they can: not root, no {@code ip}, or the
     * kernel refuses to create a namespace (e.g. in an unprivileged container).
     */
    public static synchronized Optional<String> unavailableReason() {
        if (probed == null) {
            probed = probe(); // the answer cannot change during a run: ask the kernel once per JVM
        }
        return probed;
    }

    private static Optional<String> probe() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return Optional.of("not running as root");
        }
        String probe = "hgprobe" + ThreadLocalRandom.current().nextInt(1000);
        try {
            if (run(List.of("ip", "netns", "add", probe)) != 0) {
                return Optional.of("'ip netns add' failed");
            }
            run(List.of("ip", "netns", "del", probe));
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of("no 'ip' command (" + e.getMessage() + ")");
        }
    }

    /** Creates a bridge and {@code size} namespaces; {@link #close()} removes them. */
    public static NetnsNetwork create(Distribution distribution, Path runDir, int size) {
        int k = ThreadLocalRandom.current().nextInt(100, 200);
        String prefix = "hgc" + k;
        String net = "10.78." + k;
        Map<String, String> env = Map.of("HOURGLASS_NETNS_PREFIX", prefix, "HOURGLASS_NET", net,
                "HOURGLASS_RUN_DIR", runDir.resolve("netns").toString());
        NetnsNetwork network = new NetnsNetwork(distribution.deployScript("netns-cluster.sh"), env, prefix, net, size);
        Runtime.getRuntime().addShutdownHook(network.cleanup);
        try {
            network.script("net-up", Integer.toString(size));
        } catch (RuntimeException e) {
            try {
                network.close(); // whatever net-up made before it failed
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
        return network;
    }

    public int size() {
        return size;
    }

    /** The address of node {@code i} (1-based). */
    public String address(int i) {
        check(i);
        return net + "." + (10 + i);
    }

    /** The words that run a command inside node {@code i}'s namespace; {@code ip netns exec} execs it. */
    public List<String> launcher(int i) {
        check(i);
        return List.of("ip", "netns", "exec", prefix + "-n" + i);
    }

    /** Cuts every node of {@code a} off every node of {@code b}, both ways (1-based indexes). */
    public void partition(List<Integer> a, List<Integer> b) {
        script("partition", names(a), names(b));
    }

    /**
     * Whether {@link #slow} can work here: it needs tc, and nftables for the loss where the kernel
     * has no netem (checked by the script); without nft the slow-net fault is left out.
     */
    public static boolean canSlowLinks() {
        return java.util.stream.Stream.of("/usr/sbin/nft", "/usr/bin/nft", "/sbin/nft").map(Path::of)
                .anyMatch(Files::isExecutable);
    }

    /**
     * Makes the links of {@code nodes} (1-based) slow and lossy both ways (tc netem on each one's
     * interface): every packet delayed {@code delayMs} ± {@code jitterMs}, {@code lossPercent} % dropped.
     */
    public void slow(List<Integer> nodes, int delayMs, int jitterMs, int lossPercent) {
        script("slow", names(nodes), delayMs + "ms", jitterMs + "ms", lossPercent + "%");
    }

    /** Removes every cut and every slow link. */
    public void healAll() {
        script("heal-all");
    }

    private String names(List<Integer> nodes) {
        List<String> names = new ArrayList<>();
        for (int i : nodes) {
            check(i);
            names.add("n" + i);
        }
        return String.join(",", names);
    }

    private void check(int i) {
        if (i < 1 || i > size) {
            throw new IllegalArgumentException("node " + i + " is not in 1.." + size);
        }
    }

    private void script(String... args) {
        runScript(script, env, args);
    }

    /**
     * Runs {@code sh script args...} with {@code env} added to the environment and returns its
     * combined output; fails with that output unless it exits 0 within a minute.
     */
    public static String runScript(Path script, Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of("sh", script.toString()));
        command.addAll(List.of(args));
        try {
            Path log = Files.createTempFile("netns-", ".out");
            try {
                ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(log.toFile());
                pb.environment().putAll(env);
                Process p = pb.start();
                if (!p.waitFor(SCRIPT_TIMEOUT_S, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new IllegalStateException(String.join(" ", command) + " did not finish in " + SCRIPT_TIMEOUT_S + " s");
                }
                String output = Files.readString(log, StandardCharsets.UTF_8);
                if (p.exitValue() != 0) {
                    throw new IllegalStateException(String.join(" ", command) + " exited " + p.exitValue() + ": " + output);
                }
                return output;
            } finally {
                Files.deleteIfExists(log);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command, e);
        }
    }

    private static int run(List<String> command) throws IOException {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(SCRIPT_TIMEOUT_S, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** Deletes the namespaces, veths and bridge (processes in them must be stopped first). */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException shuttingDown) {
                return; // the hook runs net-down
            }
            script("net-down");
        }
    }

    @Override
    public String toString() {
        return "namespaces " + prefix + "-n1.." + prefix + "-n" + size + " on " + net + ".0/24";
    }
}
