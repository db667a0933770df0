package io.hourglass.cli;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.RoomMetrics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass room metrics}: the rooms with the largest backlog. */
@Command(name = "metrics", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Print the --top rooms with the largest backlog, largest first: room, backlog.",
            "How many rooms have a backlog at all goes to stderr."})
final class RoomMetricsCommand implements Callable<Integer> {
    static final int MAX_TOP = 10_000;
    static final List<Column> COLUMNS = List.of(Column.text("room", "ROOM"), Column.text("backlog", "BACKLOG"));

    @ParentCommand
    private RoomCommand group;

    @Spec
    private CommandSpec spec;

    @Option(names = "--top", paramLabel = "N", description = "How many rooms, 1.." + MAX_TOP + " (default: 10).")
    private int top = 10;

    @Override
    public Integer call() {
        if (top < 1 || top > MAX_TOP) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--top must be between 1 and " + MAX_TOP + ", got " + top);
        }
        HourglassCommand root = group.root();
        RecordPrinter printer = root.printer(COLUMNS, spec.commandLine().getOut());
        try (HourglassClient client = root.openClient(b -> b)) {
            RoomMetrics metrics = client.rooms().metrics(top);
            for (RoomMetrics.Backlog b : metrics.top()) {
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("room", b.room());
                record.put("backlog", b.backlog());
                printer.print(record);
            }
            printer.finish();
            spec.commandLine().getErr().println("rooms with a backlog: " + metrics.roomsWithBacklog());
            spec.commandLine().getErr().flush();
        } finally {
            printer.flush();
        }
        return ExitCodes.OK;
    }
}
