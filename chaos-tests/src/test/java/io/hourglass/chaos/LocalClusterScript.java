package io.hourglass.chaos;

import io.hourglass.testing.TestPorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Drives {@code deploy/local-cluster.sh} (located next to this module, as {@link Distribution}
 * locates the distribution) as a process, with its own run directory and block of ports. Each
 * run's combined output is kept as {@code script-<n>.out} in the run directory and in a
 * transcript for failure reports. Not thread-safe.
 */
final class LocalClusterScript {
    /** Ports {@code base .. base + PORT_SPAN - 1} are used by up to five nodes. */
    static final int PORT_SPAN = 43;

    private final Path script;
    private final Path home;
    private final Path runDir;
    private final int basePort;
    private final StringBuilder transcript = new StringBuilder();
    private int runs;

    LocalClusterScript(Distribution distribution, Path runDir, int basePort) {
        Path module = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
        this.script = module.resolveSibling("deploy").resolve("local-cluster.sh").normalize();
        if (!Files.isRegularFile(script)) {
            throw new IllegalStateException("no " + script);
        }
        this.home = distribution.home();
        this.runDir = runDir;
        this.basePort = basePort;
        if (runDir.toString().chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalStateException("the run directory must not contain whitespace: " + runDir);
        }
    }

    /** The result of one script run: exit code (-1 if it timed out) and combined output. */
    record Result(List<String> args, int exitCode, String output) {
        String describe() {
            return "local-cluster.sh " + String.join(" ", args) + " exited " + exitCode + ":\n" + output;
        }

        /** The addresses of the {@code --servers host:port,...} line. */
        List<String> servers() {
            return output.lines().filter(l -> l.startsWith("--servers "))
                    .reduce((a, b) -> b)
                    .map(l -> List.of(l.substring("--servers ".length()).trim().split(",")))
                    .orElseThrow(() -> new AssertionError("no --servers line in " + describe()));
        }
    }

    /** A base port such that {@code base .. base + PORT_SPAN - 1} are all free ({@link TestPorts#block}). */
    static int freePortBlock() {
        return TestPorts.block(PORT_SPAN);
    }

    Path runDir() {
        return runDir;
    }

    int basePort() {
        return basePort;
    }

    /** Runs {@code sh local-cluster.sh args...}; a run longer than {@code timeout} is killed (exit -1). */
    Result run(Duration timeout, String... args) {
        int n = ++runs;
        Path out = runDir.resolve("script-" + n + ".out");
        List<String> command = new ArrayList<>(List.of("sh", script.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command)
                .directory(runDir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectErrorStream(true)
                .redirectOutput(out.toFile());
        isolate(pb.environment());
        long started = System.nanoTime();
        int exit;
        Process process;
        try {
            Files.createDirectories(runDir);
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        }
        try {
            if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                exit = process.exitValue();
            } else {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                exit = -1;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IllegalStateException("interrupted while running " + command, e);
        }
        String output;
        try {
            output = Files.readString(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            output = "(cannot read " + out + ": " + e + ")";
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        Result result = new Result(List.of(args), exit, output);
        synchronized (transcript) {
            transcript.append("$ local-cluster.sh ").append(String.join(" ", args)).append("   (exit ").append(exit)
                    .append(exit == -1 ? ", timed out after " + timeout : "").append(", ").append(ms).append(" ms)\n")
                    .append(output).append(output.endsWith("\n") || output.isEmpty() ? "" : "\n");
        }
        return result;
    }

    /** Runs the script and fails, with its output, unless it exits 0 in time. */
    Result runOk(Duration timeout, String... args) {
        Result r = run(timeout, args);
        if (r.exitCode() != 0) {
            throw new AssertionError(r.describe());
        }
        return r;
    }

    /**
     * The script sees none of the test JVM's Hourglass or JVM settings: only its run directory,
     * its ports and a bounded heap for the nodes.
     */
    private void isolate(Map<String, String> env) {
        env.keySet().removeIf(k -> k.startsWith("HOURGLASS_") || k.equals("JAVA_OPTS") || k.equals("JAVA_TOOL_OPTIONS"));
        env.put("HOURGLASS_HOME", home.toString());
        env.put("HOURGLASS_RUN_DIR", runDir.toString());
        env.put("HOURGLASS_BASE_PORT", Integer.toString(basePort));
        env.put("HOURGLASS_JAVA_OPTS", "-Xmx256m");
    }

    /**
     * Runs {@code down} (if a cluster was ever started here), then kills with SIGKILL any node
     * whose {@code n<i>/pid} file is left and whose command line names this run directory, so that
     * only processes started for this run are touched. Then deletes the nodes' data directories.
     */
    void tearDown() {
        if (Files.exists(runDir.resolve("size"))) {
            try {
                Result r = run(Duration.ofSeconds(150), "down");
                if (r.exitCode() != 0) {
                    System.out.println("LocalClusterScript: " + r.describe());
                }
            } catch (RuntimeException e) {
                System.out.println("LocalClusterScript: down failed: " + e);
            }
        }
        for (Path pidFile : pidFiles()) {
            Optional<ProcessHandle> node = readPid(pidFile).flatMap(ProcessHandle::of);
            node.filter(ProcessHandle::isAlive)
                    .filter(p -> p.info().commandLine().map(c -> c.contains(runDir.toString())).orElse(false))
                    .ifPresent(p -> {
                        System.out.println("LocalClusterScript: killing leftover node pid " + p.pid() + " (" + pidFile + ")");
                        p.destroyForcibly();
                        p.onExit().orTimeout(20, TimeUnit.SECONDS).exceptionally(t -> null).join();
                    });
        }
        // As ServerProcess.close(): the nodes' data goes, their output and logs stay.
        for (int i = 1; i <= 5; i++) {
            deleteRecursively(runDir.resolve("n" + i).resolve("data"));
        }
    }

    private static void deleteRecursively(Path root) {
        if (!Files.isDirectory(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | UncheckedIOException e) {
            System.out.println("LocalClusterScript: cannot delete " + root + ": " + e);
        }
    }

    private List<Path> pidFiles() {
        List<Path> files = new ArrayList<>();
        if (!Files.isDirectory(runDir)) {
            return files;
        }
        try (DirectoryStream<Path> nodes = Files.newDirectoryStream(runDir, "n[0-9]*")) {
            for (Path node : nodes) {
                Path pid = node.resolve("pid");
                if (Files.isRegularFile(pid)) {
                    files.add(pid);
                }
            }
        } catch (IOException e) {
            System.out.println("LocalClusterScript: cannot list " + runDir + ": " + e);
        }
        return files;
    }

    private static Optional<Long> readPid(Path file) {
        try {
            return Optional.of(Long.parseLong(Files.readString(file, StandardCharsets.US_ASCII).trim()));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** Every script run so far with its output, then the last {@code lines} lines of each node's server.out. */
    String report(int lines) {
        StringBuilder b = new StringBuilder();
        b.append("===== local-cluster.sh runs in ").append(runDir).append(" (base port ").append(basePort)
                .append(") =====\n");
        synchronized (transcript) {
            b.append(transcript);
        }
        for (int i = 1; i <= 5; i++) {
            Path out = runDir.resolve("n" + i).resolve("server.out");
            if (!Files.exists(out)) {
                continue;
            }
            b.append("===== last ").append(lines).append(" lines of ").append(out).append(" =====\n");
            try {
                List<String> all = Files.readAllLines(out, StandardCharsets.UTF_8);
                b.append(String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()))).append('\n');
            } catch (IOException | UncheckedIOException e) {
                b.append("(cannot read: ").append(e).append(")\n");
            }
        }
        return b.toString();
    }
}
