package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One node run by the distribution's {@code bin/hourglass-server} as a separate OS process, with
 * its own data directory and loopback ports, both kept across {@link #kill()} and
 * {@link #start()} so that a restart is the same node coming back.
 *
 * <p>Layout under the node's directory: {@code data/} (the node's state), {@code server.out} (stdout
 * and stderr of every incarnation, appended, each headed by a marker line) and {@code logs/} (the
 * server's rolling log file). {@link #close()} kills the process and deletes {@code data/}
 * ({@code -Dchaos.keepData=true} keeps it for a post-mortem); the logs stay for the post-mortem.
 *
 * <p>Not thread-safe: one test thread drives it. A JVM shutdown hook kills a still-running process
 * so that an aborted test run leaves no orphan behind.
 */
public final class ServerProcess implements AutoCloseable {
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMillis(200);

    private final Distribution distribution;
    private final String nodeId;
    private final NodePorts ports;
    private final Path dir;
    private final List<String> launcher;
    private final List<String> args;
    private final Map<String, String> env;
    /** Set by {@link #clockOffset}: libfaketime's variables for the next starts, or none. */
    private volatile Map<String, String> clockEnv = Map.of();
    private final HttpClient http;
    /** Security on (HTTPS, a token for /metrics), or null. */
    private final ChaosSecurity security;
    private Process process;
    private Thread reaper;

    /**
     * @param dir the node's own directory (created if missing), the process's working directory
     * @param args the server's arguments; they, or {@code env}, must put its data in {@code dir/data}
     *        and its ports at {@code ports}
     * @param env environment variables for the server on top of the harness's own
     */
    public ServerProcess(Distribution distribution, String nodeId, NodePorts ports, Path dir, List<String> args,
                         Map<String, String> env) {
        this(distribution, nodeId, ports, dir, List.of(), args, env);
    }

    /**
     * @param launcher words put before the server script, e.g. {@code ip netns exec NS} to run
     *        the node in a network namespace; the launcher must exec the script, so that the
     *        process's pid stays the server's
     */
    private ServerProcess(Distribution distribution, String nodeId, NodePorts ports, Path dir, List<String> launcher,
                          List<String> args, Map<String, String> env) {
        this(distribution, nodeId, ports, dir, launcher, args, env, null);
    }

    private ServerProcess(Distribution distribution, String nodeId, NodePorts ports, Path dir, List<String> launcher,
                          List<String> args, Map<String, String> env, ChaosSecurity security) {
        this.security = security;
        this.http = security == null ? HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build()
                : security.http();
        this.distribution = distribution;
        this.nodeId = nodeId;
        this.ports = ports;
        this.dir = dir;
        this.launcher = List.copyOf(launcher);
        this.args = List.copyOf(args);
        this.env = Map.copyOf(env);
    }

    /** A standalone node in {@code runDir/<nodeId>/}, configured by flags. */
    public static ServerProcess standalone(Distribution distribution, Path runDir, String nodeId) {
        return member(distribution, runDir, nodeId, NodePorts.allocate(), List.of());
    }

    /**
     * A node in {@code runDir/<nodeId>/} configured by flags, with {@code --peers} when
     * {@code peers} (as {@code id=host:raftPort:grpcPort}) is not empty.
     */
    public static ServerProcess member(Distribution distribution, Path runDir, String nodeId, NodePorts ports,
                                       List<String> peers) {
        return member(distribution, runDir, nodeId, ports, peers, List.of(), false);
    }

    /**
     * A node as {@link #member(Distribution, Path, String, NodePorts, List)}, started through
     * {@code launcher} (see the constructor), with {@code --join} when {@code join}: it starts
     * empty and waits to be added with the Admin API's AddNode.
     */
    public static ServerProcess member(Distribution distribution, Path runDir, String nodeId, NodePorts ports,
                                       List<String> peers, List<String> launcher, boolean join) {
        Path dir = runDir.resolve(nodeId);
        List<String> args = new ArrayList<>(List.of(
                "--node-id", nodeId,
                "--data-dir", dir.resolve("data").toString(),
                "--host", ports.host(),
                "--grpc-port", Integer.toString(ports.grpc()),
                "--raft-port", Integer.toString(ports.raft()),
                "--http-port", Integer.toString(ports.http())));
        if (!peers.isEmpty()) {
            args.addAll(List.of("--peers", String.join(",", peers)));
        }
        if (join) {
            args.add("--join");
        }
        return new ServerProcess(distribution, nodeId, ports, dir, launcher, args, Map.of());
    }

    /** This node with {@code extra} added to its environment (it must not have been started). */
    public ServerProcess withEnv(Map<String, String> extra) {
        if (extra.isEmpty()) {
            return this;
        }
        Map<String, String> merged = new java.util.HashMap<>(env);
        merged.putAll(extra);
        return new ServerProcess(distribution, nodeId, ports, dir, launcher, args, merged, security);
    }

    /** This node with security on ({@code security} null: unchanged); it must not have been started. */
    public ServerProcess withSecurity(ChaosSecurity value) {
        if (value == null) {
            return this;
        }
        Map<String, String> merged = new java.util.HashMap<>(env);
        merged.putAll(value.env());
        return new ServerProcess(distribution, nodeId, ports, dir, launcher, args, merged, value);
    }

    private HttpRequest get(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create((security == null ? "http://" : "https://")
                + ports.host() + ":" + ports.http() + path)).timeout(Duration.ofSeconds(2)).GET();
        if (security != null) {
            b.header("Authorization", "Bearer " + security.token());
        }
        return b.build();
    }

    /**
     * {@code hourglass-server} with no arguments, run in {@code runDir/default/}: the node must
     * take the shipped defaults and keep its data in {@code ./data}. Only the ports come from
     * {@code HOURGLASS_*} variables, so that the test cannot collide with a node on 7070-7072.
     */
    public static ServerProcess withoutArguments(Distribution distribution, Path runDir) {
        NodePorts ports = NodePorts.allocate();
        return new ServerProcess(distribution, "n1", ports, runDir.resolve("default"), List.of(), Map.of(
                "HOURGLASS_GRPC_PORT", Integer.toString(ports.grpc()),
                "HOURGLASS_RAFT_PORT", Integer.toString(ports.raft()),
                "HOURGLASS_HTTP_PORT", Integer.toString(ports.http())));
    }

    public String nodeId() {
        return nodeId;
    }

    public NodePorts ports() {
        return ports;
    }

    public Path dataDir() {
        return dir.resolve("data");
    }

    public Path outputFile() {
        return dir.resolve("server.out");
    }

    /** The pid of the current (or last) incarnation. */
    public long pid() {
        if (process == null) {
            throw new IllegalStateException(nodeId + " was never started");
        }
        return process.pid();
    }

    /** The executable of the running process as the OS reports it, or "" if unknown. */
    public String processCommand() {
        return process == null ? "" : process.info().command().orElse("");
    }

    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    /** Starts the process and waits until {@code /readyz} answers 200. */
    public void startAndAwaitReady(Duration timeout) {
        start();
        awaitReady(timeout);
    }

    /** Launches the server process; it must not be running. */
    public void start() {
        if (isAlive()) {
            throw new IllegalStateException(nodeId + " is already running as pid " + process.pid());
        }
        List<String> command = new ArrayList<>(launcher);
        command.add(distribution.serverScript().toString());
        command.addAll(args);
        try {
            Files.createDirectories(dir);
            Files.writeString(outputFile(), "=== " + Instant.now() + " starting: " + String.join(" ", command) + "\n",
                    StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            ProcessBuilder pb = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(outputFile().toFile()));
            isolate(pb.environment());
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + nodeId, e);
        }
        Process started = process;
        reaper = new Thread(started::destroyForcibly, "reap-" + nodeId);
        Runtime.getRuntime().addShutdownHook(reaper);
    }

    /**
     * The child sees none of the test JVM's Hourglass or JVM settings: only what this harness
     * passes, so a developer's shell cannot change what the test runs.
     */
    private void isolate(Map<String, String> processEnv) {
        if (dir.toString().chars().anyMatch(Character::isWhitespace)) {
            // HOURGLASS_JAVA_OPTS is split on whitespace by the script.
            throw new IllegalStateException("the node directory must not contain whitespace: " + dir);
        }
        processEnv.keySet().removeIf(k -> k.startsWith("HOURGLASS_") || k.equals("JAVA_OPTS")
                || k.equals("JAVA_TOOL_OPTIONS"));
        processEnv.put("HOURGLASS_NODE_BINDHOST", ports.host());
        processEnv.put("HOURGLASS_JAVA_OPTS", "-Xmx256m -Dhourglass.log.dir=" + dir.resolve("logs"));
        processEnv.putAll(env);
        processEnv.putAll(clockEnv);
    }

    /**
     * Where Debian's faketime package puts libfaketime, if it is installed: the plain variant, not
     * the MT one, whose lock makes every clock read of the JVM cost ~17 µs here instead of ~1.3 µs
     * (a node under it took minutes to start); a fixed offset needs no lock.
     */
    public static Optional<Path> faketimeLibrary() {
        return Stream.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                        "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1", "/usr/lib/faketime/libfaketime.so.1")
                .map(Path::of).filter(Files::isReadable).findFirst();
    }

    /**
     * Runs the next starts of this node with its wall clock {@code offset} off the real one
     * (libfaketime, through LD_PRELOAD), or with the real clock again for null or zero. The
     * monotonic clock is faked too: left true (FAKETIME_DONT_FAKE_MONOTONIC), the JVM's timed waits
     * return at once under libfaketime 0.9.10 and its threads spin (9 s of CPU in 5 s idle).
     */
    public void clockOffset(Duration offset) {
        if (offset == null || offset.isZero()) {
            clockEnv = Map.of();
            return;
        }
        Path lib = faketimeLibrary().orElseThrow(() -> new IllegalStateException("libfaketime is not installed"));
        long s = offset.toSeconds();
        clockEnv = Map.of("LD_PRELOAD", lib.toString(), "FAKETIME", (s >= 0 ? "+" : "") + s + "s");
    }

    /**
     * Waits until {@code /readyz} answers 200 (a leader is known and the node caught up). Fails
     * at once if the process exits, and after the timeout otherwise, with the tail of its output.
     */
    public void awaitReady(Duration timeout) {
        String[] lastAnswer = {"no answer"};
        try {
            await(nodeId + " ready").atMost(timeout).pollInterval(POLL).until(() -> {
                if (!process.isAlive()) {
                    throw new IllegalStateException("exited with code " + process.exitValue());
                }
                HttpResponse<String> r = readyz();
                if (r != null) {
                    lastAnswer[0] = r.statusCode() + " " + r.body().strip();
                }
                return r != null && r.statusCode() == 200;
            });
        } catch (RuntimeException e) {
            throw new AssertionError(nodeId + " did not become ready within " + timeout + " (" + e.getMessage()
                    + "); its last /readyz answer: " + lastAnswer[0] + "; its last warnings:\n" + outputWarnings(25)
                    + "\nlast lines of " + outputFile() + ":\n" + outputTail(20), e);
        }
    }

    /** {@code kill -9}: the process gets no chance to flush or close anything. Returns once it is gone. */
    public void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        awaitExit();
    }

    /** SIGTERM: the server's shutdown hook closes the node cleanly. Returns the exit code. */
    public int stop() {
        if (process == null) {
            throw new IllegalStateException(nodeId + " was never started");
        }
        process.destroy();
        return awaitExit();
    }

    /** Waits up to {@code timeout} for the process to end by itself; its exit code, or -1 if it still runs. */
    public int awaitOwnExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            return -1;
        }
        removeReaper();
        return process.exitValue();
    }

    private int awaitExit() {
        try {
            if (!process.waitFor(EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(EXIT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                throw new AssertionError(nodeId + " (pid " + process.pid() + ") did not exit within " + EXIT_TIMEOUT
                        + "; last lines of " + outputFile() + ":\n" + outputTail(40));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IllegalStateException("interrupted while waiting for " + nodeId + " to exit", e);
        } finally {
            removeReaper();
        }
        return process.exitValue();
    }

    private void removeReaper() {
        if (reaper != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(reaper);
            } catch (IllegalStateException shuttingDown) {
                // The JVM is exiting; the hook runs anyway.
            }
            reaper = null;
        }
    }

    /** The HTTP status of {@code path} on the node's HTTP port, or -1 if it does not answer. */
    private HttpResponse<String> readyz() {
        try {
            return http.send(get("/readyz"), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    public int httpStatus(String path) {
        HttpRequest request = get(path);
        try {
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** The body of {@code path} on the node's HTTP port if it answers 200, empty otherwise. */
    public Optional<String> httpGet(String path) {
        HttpRequest request = get(path);
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            return response.statusCode() == 200 ? Optional.of(response.body()) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** The last {@code lines} lines of the process's output, for failure messages. */
    public String outputTail(int lines) {
        return fromOutput(all -> lastOf(all, lines));
    }

    /** What {@code render} makes of the output's lines, or why there are none to read. */
    private String fromOutput(java.util.function.Function<List<String>, String> render) {
        try {
            if (!Files.exists(outputFile())) {
                return "(no output file)";
            }
            return render.apply(Files.readAllLines(outputFile(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            return "(cannot read " + outputFile() + ": " + e.getMessage() + ")";
        }
    }

    private static String lastOf(List<String> lines, int count) {
        return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
    }

    /**
     * The last {@code lines} warnings and errors of the output, one line each (no stack traces) and each
     * message once: a tail full of one repeated stack trace hides what went wrong first.
     */
    public String outputWarnings(int lines) {
        return fromOutput(all -> {
            java.util.LinkedHashMap<String, String> byMessage = new java.util.LinkedHashMap<>();
            for (String line : all) {
                int level = Math.max(line.indexOf(" WARN "), line.indexOf(" ERROR "));
                if (level > 0) {
                    String message = line.substring(level);
                    byMessage.remove(message);
                    byMessage.put(message, line.length() > 400 ? line.substring(0, 400) + "…" : line);
                }
            }
            return lastOf(List.copyOf(byMessage.values()), lines);
        });
    }

    /** Deletes the data directory of a node that is not running: it restarts empty. */
    public void wipeData() {
        if (isAlive()) {
            throw new IllegalStateException(nodeId + " is running as pid " + process.pid() + ": kill it first");
        }
        deleteRecursively(dataDir());
    }

    /** Kills the process if it runs and deletes the data directory; output and logs stay. */
    @Override
    public void close() {
        try {
            kill();
        } finally {
            if (!Boolean.getBoolean("chaos.keepData")) {
                deleteRecursively(dataDir());
            }
        }
    }

    private static void deleteRecursively(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                if (!p.equals(root)) { // the directory stays, empty: it may be a mount point (Tmpfs)
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + root, e);
        }
    }
}
