package io.hourglass.chaos.run;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Appends chaos history events, one JSON object per line, in the format the
 * {@link io.hourglass.chaos.check.HistoryChecker} reads. Thread-safe: every event is one
 * synchronized write, so lines never interleave.
 */
final class HistoryRecorder implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path file;
    private final BufferedWriter out;
    private boolean closed;

    HistoryRecorder(Path file) {
        this.file = file;
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            this.out = Files.newBufferedWriter(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create history " + file, e);
        }
    }

    Path file() {
        return file;
    }

    /** Records an event stamped now. */
    void record(String type, String process, Map<String, ?> fields) {
        record(type, process, System.currentTimeMillis(), fields);
    }

    /** Records an event with the given time; {@code fields} must not use {@code type, process, t}. */
    void record(String type, String process, long t, Map<String, ?> fields) {
        ObjectNode node = JSON.createObjectNode();
        node.put("type", type);
        node.put("process", process);
        node.put("t", t);
        fields.forEach((k, v) -> node.set(k, JSON.valueToTree(v)));
        String line;
        try {
            line = JSON.writeValueAsString(node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        synchronized (this) {
            if (closed) {
                return; // a late callback after the run ended: not part of the history
            }
            try {
                out.write(line);
                out.write('\n');
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write history " + file, e);
            }
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close history " + file, e);
        }
    }
}
