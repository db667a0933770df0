package io.hourglass.cli;

import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * An aligned table with a header line. Rows are held until {@link #flush()}, and every column is
 * as wide as its widest value so far: a listing (printed, then flushed once) fits its widest
 * value. A stream (consume) flushes after each row, so its widths are fixed by the rows it has
 * seen; a later, wider value widens that column from then on. The last column is never padded, so
 * put the free-form one (the payload) last. {@link #finish()} writes {@code (none)} when no row
 * was printed at all, so an empty result is visible.
 *
 * <p>Not thread-safe, like every {@link RecordPrinter}.
 */
final class TableRecordPrinter implements RecordPrinter {
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    private static final String GAP = "  ";
    static final String NONE = "(none)";

    private final List<Column> columns;
    private final PrintWriter out;
    private final int[] widths;
    private final List<String[]> held = new ArrayList<>();
    private boolean headerPrinted;
    private boolean anyRow;

    TableRecordPrinter(List<Column> columns, PrintWriter out) {
        this.columns = List.copyOf(columns);
        this.out = out;
        this.widths = new int[this.columns.size()];
        for (int i = 0; i < widths.length; i++) {
            widths[i] = this.columns.get(i).header().length();
        }
    }

    @Override
    public void print(Map<String, ?> record) {
        String[] cells = new String[columns.size()];
        for (int i = 0; i < cells.length; i++) {
            cells[i] = cell(columns.get(i), record.get(columns.get(i).name()));
            widths[i] = Math.max(widths[i], cells[i].length());
        }
        held.add(cells);
        anyRow = true;
    }

    @Override
    public void flush() {
        if (!held.isEmpty()) {
            if (!headerPrinted) {
                out.println(line(columns.stream().map(Column::header).toArray(String[]::new)));
                headerPrinted = true;
            }
            held.forEach(cells -> out.println(line(cells)));
            held.clear();
        }
        out.flush();
    }

    @Override
    public void finish() {
        flush();
        if (!anyRow) {
            out.println(NONE);
            out.flush();
        }
    }

    private String line(String[] cells) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            if (i > 0) {
                sb.append(GAP);
            }
            sb.append(cells[i]);
            if (i < cells.length - 1) {
                sb.append(" ".repeat(Math.max(0, widths[i] - cells[i].length())));
            }
        }
        return sb.toString();
    }

    private static String cell(Column column, Object value) {
        if (value == null) {
            return "-";
        }
        return switch (column.kind()) {
            case TEXT -> printable(value.toString());
            case TIME -> time(value);
            case CUSTOM -> printable(column.format().apply(value));
            case MAP -> value instanceof Map<?, ?> m && !m.isEmpty()
                    ? new TreeMap<>(m).entrySet().stream()
                            .map(e -> e.getKey() + "=" + e.getValue())
                            .map(TableRecordPrinter::printable)
                            .collect(Collectors.joining(","))
                    : "-";
        };
    }

    static String time(Object value) {
        return value instanceof Number n && n.longValue() > 0
                ? TIME.format(Instant.ofEpochMilli(n.longValue())) : "-";
    }

    /** Keeps one record on one line: control characters are shown escaped. */
    private static String printable(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (Character.isISOControl(c)) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.toString();
    }
}
