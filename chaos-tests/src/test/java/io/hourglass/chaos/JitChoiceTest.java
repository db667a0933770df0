package io.hourglass.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code HOURGLASS_JIT} in {@code bin/hourglass-server} and {@code bin/hourglass}: C1 alone below
 * 4 CPUs by default (here: one CPU through {@code taskset}), always with {@code c1}, never with
 * {@code tiered}; a {@code Tiered} option of the user's decides instead; anything else is refused
 * with one line and exit 2. The scripts run against a stand-in {@code java} that prints its
 * arguments, so nothing starts.
 */
final class JitChoiceTest {
    private static final String C1 = "-XX:TieredStopAtLevel=1";

    @TempDir
    Path dir;
    private Distribution distribution;
    private Path fakeJdk;

    private record Run(int exit, List<String> args, String stderr) {
    }

    @BeforeEach
    void fakeJava() throws IOException {
        distribution = Distribution.locate();
        fakeJdk = dir.resolve("jdk");
        Path java = fakeJdk.resolve("bin").resolve("java");
        Files.createDirectories(java.getParent());
        Files.writeString(java, "#!/bin/sh\nprintf '%s\\n' \"$@\"\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private Run run(Path script, Map<String, String> env, String... prefix) throws Exception {
        List<String> command = new ArrayList<>(List.of(prefix));
        command.add(script.toString());
        command.add("--help");
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
        pb.environment().remove("JAVA_OPTS");
        pb.environment().remove("HOURGLASS_JAVA_OPTS");
        pb.environment().remove("HOURGLASS_JIT");
        pb.environment().put("JAVA_HOME", fakeJdk.toString());
        pb.environment().putAll(env);
        Process p = pb.start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the script did not finish");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Run(p.exitValue(), out.lines().toList(), err);
    }

    @Test
    void bothScriptsChooseC1AloneOnFewCpusOrWhenAskedAndTieredWhenAsked() throws Exception {
        for (Path script : List.of(distribution.serverScript(), distribution.cliScript())) {
            Run oneCpu = run(script, Map.of(), "taskset", "-c", "0");
            assertTrue(oneCpu.args().contains(C1), () -> script + " on one CPU: " + oneCpu.args());
            Run c1 = run(script, Map.of("HOURGLASS_JIT", "c1"));
            assertTrue(c1.args().contains(C1), () -> script + " with c1: " + c1.args());
            Run tiered = run(script, Map.of("HOURGLASS_JIT", "tiered"), "taskset", "-c", "0");
            assertFalse(tiered.args().stream().anyMatch(a -> a.contains("Tiered")), () -> script + " tiered: " + tiered.args());
        }
    }

    @Test
    void theUsersTieredOptionWins() throws Exception {
        for (Path script : List.of(distribution.serverScript(), distribution.cliScript())) {
            Run own = run(script, Map.of("HOURGLASS_JIT", "c1", "JAVA_OPTS", "-XX:TieredStopAtLevel=4"));
            assertEquals(List.of("-XX:TieredStopAtLevel=4"), own.args().stream().filter(a -> a.contains("Tiered")).toList(),
                    () -> script + ": " + own.args());
        }
    }

    /**
     * Below 3 CPUs the server's common fork-join pool gets 2 threads: at 1 (the JVM's CPUs - 1) every
     * async step without an executor, as Ratis' follower appends, would start a thread of its own.
     */
    @Test
    void theServerGivesTheCommonPoolTwoThreadsOnFewCpusUnlessTheUserSetsIt() throws Exception {
        String two = "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2";
        Run oneCpu = run(distribution.serverScript(), Map.of(), "taskset", "-c", "0");
        assertTrue(oneCpu.args().contains(two), () -> "on one CPU: " + oneCpu.args());
        Run own = run(distribution.serverScript(), Map.of("HOURGLASS_JAVA_OPTS",
                "-Djava.util.concurrent.ForkJoinPool.common.parallelism=6"), "taskset", "-c", "0");
        assertEquals(List.of("-Djava.util.concurrent.ForkJoinPool.common.parallelism=6"), own.args().stream()
                .filter(a -> a.contains("common.parallelism")).toList(), () -> "the user's: " + own.args());
        if (Runtime.getRuntime().availableProcessors() >= 3) {
            Run many = run(distribution.serverScript(), Map.of());
            assertFalse(many.args().contains(two), () -> "on " + Runtime.getRuntime().availableProcessors()
                    + " CPUs: " + many.args());
        }
    }

    @Test
    void anUnknownChoiceIsRefusedWithOneLine() throws Exception {
        for (Path script : List.of(distribution.serverScript(), distribution.cliScript())) {
            Run bad = run(script, Map.of("HOURGLASS_JIT", "fast"));
            assertEquals(2, bad.exit(), () -> script + ": " + bad);
            assertEquals(1, bad.stderr().lines().count(), () -> script + ": " + bad.stderr());
            assertTrue(bad.stderr().contains("use auto, c1 or tiered"), bad::stderr);
            assertTrue(bad.args().isEmpty(), "nothing started");
        }
    }
}
