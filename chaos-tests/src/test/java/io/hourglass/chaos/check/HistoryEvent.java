package io.hourglass.chaos.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/** One line of a chaos history; see the package documentation for the format. */
public record HistoryEvent(int line, String type, String process, long t, JsonNode fields) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Parses history lines; blank lines and {@code #} comments are skipped. */
    public static List<HistoryEvent> parse(List<String> lines) {
        List<HistoryEvent> events = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String text = lines.get(i).strip();
            if (text.isEmpty() || text.startsWith("#")) {
                continue;
            }
            JsonNode node;
            try {
                node = JSON.readTree(text);
            } catch (IOException e) {
                throw new UncheckedIOException("history line " + (i + 1) + " is not JSON: " + text, e);
            }
            if (node == null || !node.isObject() || !node.hasNonNull("type")) {
                throw new IllegalArgumentException("history line " + (i + 1) + " has no type: " + text);
            }
            events.add(new HistoryEvent(i + 1, node.get("type").asText(), node.path("process").asText(""),
                    node.path("t").asLong(0), node));
        }
        return events;
    }

    public String str(String field) {
        return fields.path(field).asText("");
    }

    public long num(String field) {
        return fields.path(field).asLong(0);
    }

    public boolean flag(String field) {
        return fields.path(field).asBoolean(false);
    }

    public boolean has(String field) {
        return fields.hasNonNull(field);
    }
}
