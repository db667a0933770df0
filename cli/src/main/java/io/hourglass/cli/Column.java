package io.hourglass.cli;

import java.util.function.Function;

/**
 * One field of a printed record.
 *
 * @param name the JSON field name (the contract scripts read)
 * @param header the table heading
 * @param kind how the table shows the value; JSON always writes it as is (times as epoch ms)
 * @param format for {@link Kind#CUSTOM}: renders a non-null value as a table cell
 */
record Column(String name, String header, Kind kind, Function<Object, String> format) {
    enum Kind {
        /** Strings and numbers. */
        TEXT,
        /** Epoch milliseconds; the table shows UTC ISO-8601. */
        TIME,
        /** A string map; the table shows {@code k=v,k=v}. */
        MAP,
        /** Any value, shown by the column's own {@code format}. */
        CUSTOM
    }

    static Column text(String name, String header) {
        return new Column(name, header, Kind.TEXT, null);
    }

    static Column time(String name, String header) {
        return new Column(name, header, Kind.TIME, null);
    }

    static Column map(String name, String header) {
        return new Column(name, header, Kind.MAP, null);
    }

    /** A column whose table cell is {@code format(value)} (JSON still writes the value as is). */
    static Column custom(String name, String header, Function<Object, String> format) {
        return new Column(name, header, Kind.CUSTOM, format);
    }

    /** Epoch milliseconds as the table writes times: UTC ISO-8601, or {@code -} when not set. */
    static String formatTime(Object value) {
        return TableRecordPrinter.time(value);
    }
}
