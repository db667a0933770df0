package io.hourglass.cli;

import io.hourglass.client.AdminClient;
import io.hourglass.client.HourglassClient;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/** What the admin commands share: run one Admin call and print its records. */
final class AdminSupport {
    private AdminSupport() {
    }

    /** Opens a client, calls {@code call} and prints every record it returns. */
    static int print(HourglassCommand root, CommandSpec spec, List<Column> columns,
                     Function<AdminClient, List<? extends Map<String, ?>>> call) {
        RecordPrinter printer = root.printer(columns, spec.commandLine().getOut());
        try (HourglassClient client = root.openClient(b -> b)) {
            for (Map<String, ?> record : call.apply(client.admin())) {
                printer.print(record);
            }
            printer.finish();
        } finally {
            printer.flush();
        }
        return ExitCodes.OK;
    }

    /** A record with these fields in this order: {@code record("name", n, "created", c)}. */
    static Map<String, Object> record(Object... namesAndValues) {
        if (namesAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("record needs name, value pairs");
        }
        Map<String, Object> record = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            record.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return record;
    }

    /** @throws CommandLine.ParameterException (exit 2) if {@code value} is blank */
    static String require(CommandSpec spec, String what, String value) {
        if (value == null || value.isBlank()) {
            throw new CommandLine.ParameterException(spec.commandLine(), what + " must not be empty");
        }
        return value;
    }

    /** User input quoted back in a message: at most 200 characters, so one line stays readable. */
    static String shorten(String input) {
        return input.length() <= 200 ? input : input.substring(0, 200) + "…(" + input.length() + " chars)";
    }

    /** Table cell of a list: comma-separated, {@code -} when empty. */
    static String list(Object value) {
        List<?> items = (List<?>) value;
        return items.isEmpty() ? "-" : items.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    /** Table cell of a map: {@code k=v,k=v}, {@code -} when empty. */
    static String map(Object value) {
        Map<?, ?> m = (Map<?, ?>) value;
        return m.isEmpty() ? "-" : m.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(","));
    }
}
