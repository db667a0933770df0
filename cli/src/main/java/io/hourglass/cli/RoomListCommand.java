package io.hourglass.cli;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.RoomStatus;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass room list}: every room the rooms leader knows, with the fields of {@code room state}. */
@Command(name = "list", sortOptions = false, mixinStandardHelpOptions = true,
        description = "Print one record per room that has members, listeners or a backlog, by name, with the "
                + "fields of 'room state'.")
final class RoomListCommand implements Callable<Integer> {
    @ParentCommand
    private RoomCommand group;

    @Spec
    private CommandSpec spec;

    @Option(names = "--offset", paramLabel = "N", description = "Skip the first N rooms (default: 0).")
    private int offset;

    @Option(names = "--limit", paramLabel = "N", description = "Print at most N, 1..10000 (default: 100).")
    private int limit = 100;

    @Override
    public Integer call() {
        if (offset < 0 || limit < 1 || limit > 10_000) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--offset must not be negative and --limit must be between 1 and 10000, got " + offset + ", " + limit);
        }
        HourglassCommand root = group.root();
        RecordPrinter printer = root.printer(RoomStateCommand.COLUMNS, spec.commandLine().getOut());
        try (HourglassClient client = root.openClient(b -> b)) {
            List<RoomStatus> rooms = client.rooms().list(offset, limit);
            rooms.forEach(r -> printer.print(RoomStateCommand.record(r)));
            printer.finish();
        } finally {
            printer.flush();
        }
        return ExitCodes.OK;
    }
}
