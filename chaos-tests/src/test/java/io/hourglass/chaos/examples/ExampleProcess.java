package io.hourglass.chaos.examples;

import static org.awaitility.Awaitility.await;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One run of a client example as an OS process: its stdout and stderr, merged, are read line by
 * line as they come (so that a test can act on a line while the example runs) and copied to a log
 * file that stays after the test.
 *
 * <p>Threads: a daemon thread ({@code example-output}) owns the process's output and appends to
 * {@code lines}, which the test thread reads. {@link #close()} kills the process (and any child)
 * if it still runs.
 */
final class ExampleProcess implements AutoCloseable {
    private static final Duration POLL = Duration.ofMillis(50);

    private final String name;
    private final Process process;
    private final Path log;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;

    private ExampleProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.reader = new Thread(this::copyOutput, "example-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code command} in {@code workDir} with {@code env} added to this JVM's environment. */
    static ExampleProcess start(String name, List<String> command, Map<String, String> env, Path workDir, Path log) {
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true);
        pb.environment().putAll(env);
        try {
            Files.createDirectories(log.getParent());
            Files.writeString(log, "=== " + String.join(" ", command) + "\n", StandardCharsets.UTF_8);
            return new ExampleProcess(name, pb.start(), log);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the " + name + " example: " + command, e);
        }
    }

    private void copyOutput() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8));
             Writer out = Files.newBufferedWriter(log, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND)) {
            String line;
            while ((line = in.readLine()) != null) {
                lines.add(line);
                out.write(line);
                out.write('\n');
                out.flush();
            }
        } catch (IOException e) {
            lines.add("(reading the example's output failed: " + e + ")");
        }
    }

    List<String> lines() {
        return List.copyOf(lines);
    }

    /**
     * Waits for the first line matching {@code pattern} (anywhere in the line) and returns its index.
     * Fails at once, with the output, if the example exits first.
     */
    int awaitLine(Pattern pattern, Duration timeout) {
        try {
            await(name + " prints /" + pattern + "/").atMost(timeout).pollInterval(POLL)
                    .until(() -> indexOf(pattern, 0) >= 0 || !process.isAlive() && !reader.isAlive());
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("the " + name + " example printed no line matching /" + pattern + "/ within "
                    + timeout + ":\n" + output(), e);
        }
        int index = indexOf(pattern, 0);
        if (index < 0) {
            throw new AssertionError("the " + name + " example exited (" + process.exitValue()
                    + ") without printing a line matching /" + pattern + "/:\n" + output());
        }
        return index;
    }

    /** The index of the first line at or after {@code from} matching {@code pattern}, or -1. */
    int indexOf(Pattern pattern, int from) {
        List<String> now = lines();
        for (int i = from; i < now.size(); i++) {
            if (pattern.matcher(now.get(i)).find()) {
                return i;
            }
        }
        return -1;
    }

    /** Waits for the example to exit and its output to be read; returns its exit code. */
    int awaitExit(Duration timeout) {
        try {
            await(name + " exits").atMost(timeout).pollInterval(POLL)
                    .until(() -> !process.isAlive() && !reader.isAlive());
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("the " + name + " example did not exit within " + timeout + ":\n" + output(), e);
        }
        return process.exitValue();
    }

    /** Everything it printed so far, numbered, for failure messages. */
    String output() {
        List<String> now = lines();
        StringBuilder b = new StringBuilder("----- ").append(name).append(" example output (").append(log)
                .append(") -----\n");
        for (int i = 0; i < now.size(); i++) {
            b.append(String.format("%3d| %s%n", i, now.get(i)));
        }
        return b.append("----- end -----").toString();
    }

    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }
}
