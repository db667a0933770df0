package io.hourglass.cli;

/**
 * One field of a printed record.
 *
 * @param name the JSON field name (the contract scripts read)
 * @param header the table heading
 * @param kind how the table shows the value; JSON always writes it as is (times as epoch ms)
 */
record Column(String name, String header, Kind kind) {
    enum Kind {
        /** Strings and numbers. */
        TEXT,
        /** Epoch milliseconds; the table shows UTC ISO-8601. */
        TIME,
        /** A string map; the table shows {@code k=v,k=v}. */
        MAP
    }

    static Column text(String name, String header) {
        return new Column(name, header, Kind.TEXT);
    }

    static Column time(String name, String header) {
        return new Column(name, header, Kind.TIME);
    }

    static Column map(String name, String header) {
        return new Column(name, header, Kind.MAP);
    }
}
