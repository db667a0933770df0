package io.hourglass.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What one run of {@code bin/hourglass} did: its exit code, its stdout lines and its stderr.
 *
 * @param command the arguments after the script, for messages
 */
public record CliResult(List<String> command, int exitCode, List<String> stdout, String stderr) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public CliResult {
        command = List.copyOf(command);
        stdout = List.copyOf(stdout);
    }

    /** Fails unless the command exited 0. */
    public CliResult assertSuccess() {
        if (exitCode != 0) {
            throw new AssertionError("expected exit code 0, " + describe());
        }
        return this;
    }

    /** The stdout of {@code --output json}: one JSON object per non-blank line. */
    public List<JsonNode> records() {
        List<JsonNode> records = new ArrayList<>();
        for (String line : stdout) {
            if (line.isBlank()) {
                continue;
            }
            try {
                JsonNode node = JSON.readTree(line);
                if (node == null || !node.isObject()) {
                    throw new AssertionError("not a JSON object: '" + line + "'; " + describe());
                }
                records.add(node);
            } catch (IOException e) {
                throw new AssertionError("not JSON: '" + line + "'; " + describe(), e);
            }
        }
        return records;
    }

    /** The command, exit code, stdout and stderr, for failure messages. */
    public String describe() {
        return "hourglass " + String.join(" ", command) + " exited " + exitCode
                + "\n--- stdout (" + stdout.size() + " lines) ---\n" + String.join("\n", stdout)
                + "\n--- stderr ---\n" + stderr;
    }
}
