package io.hourglass.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.Map;

/** One JSON object per line, fields in column order, times as epoch-millisecond integers. */
final class JsonRecordPrinter implements RecordPrinter {
    private final ObjectMapper mapper = new ObjectMapper();
    private final PrintWriter out;

    JsonRecordPrinter(PrintWriter out) {
        this.out = out;
    }

    @Override
    public void print(Map<String, ?> record) {
        try {
            out.println(mapper.writeValueAsString(record));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void flush() {
        out.flush();
    }
}
