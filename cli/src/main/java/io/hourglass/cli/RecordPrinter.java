package io.hourglass.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;

/**
 * Prints a command's records to stdout in the chosen {@link OutputFormat}. A record is a map from
 * {@link Column#name()} to value (String, Number or {@code Map<String, String>}).
 *
 * <p>Not thread-safe: a command prints from one thread at a time.
 */
interface RecordPrinter {
    void print(Map<String, ?> record);

    /** Pushes printed records out; commands that stream (consume) call it after each record. */
    void flush();

    /**
     * The result is complete: flushes, and in table mode writes {@code (none)} when there was no
     * record, so that an empty result is not an empty screen. JSON prints nothing for none.
     */
    default void finish() {
        flush();
    }

    static RecordPrinter create(OutputFormat format, List<Column> columns, PrintWriter out) {
        return switch (format) {
            case JSON -> new JsonRecordPrinter(out);
            case TABLE -> new TableRecordPrinter(columns, out);
        };
    }
}
