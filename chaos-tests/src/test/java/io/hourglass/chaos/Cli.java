package io.hourglass.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the distribution's {@code bin/hourglass} as a process, the way a script or an operator
 * would. Each run's stdout and stderr are kept as {@code cli-<n>.out} and {@code cli-<n>.err} in the
 * run directory. Not thread-safe.
 */
public final class Cli {
    private final Distribution distribution;
    private final Path runDir;
    private int runs;

    public Cli(Distribution distribution, Path runDir) {
        this.distribution = distribution;
        this.runDir = runDir;
    }

    /**
     * Runs {@code hourglass args...} and waits at most {@code timeout} for it to exit; a run that
     * takes longer is killed and fails the test with what it printed so far.
     */
    public CliResult run(Duration timeout, String... args) {
        int n = ++runs;
        Path out = runDir.resolve("cli-" + n + ".out");
        Path err = runDir.resolve("cli-" + n + ".err");
        List<String> command = new ArrayList<>();
        command.add(distribution.cliScript().toString());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command)
                .directory(runDir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile());
        isolate(pb.environment());
        Process process;
        try {
            Files.createDirectories(runDir);
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        }
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("did not finish within " + timeout + ": "
                        + result(List.of(args), -1, out, err).describe());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IllegalStateException("interrupted while running " + command, e);
        }
        return result(List.of(args), process.exitValue(), out, err);
    }

    /** Only what the test asks for reaches the CLI; a short-lived JVM starts faster on C1 alone. */
    private static void isolate(Map<String, String> env) {
        env.keySet().removeIf(k -> k.startsWith("HOURGLASS_") || k.equals("JAVA_OPTS") || k.equals("JAVA_TOOL_OPTIONS"));
        env.put("HOURGLASS_JAVA_OPTS", "-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1");
    }

    private static CliResult result(List<String> args, int exitCode, Path out, Path err) {
        try {
            return new CliResult(args, exitCode, Files.readAllLines(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
