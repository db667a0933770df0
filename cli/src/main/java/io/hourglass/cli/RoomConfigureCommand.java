package io.hourglass.cli;

import io.hourglass.client.HourglassClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass room configure}: sets a room's delivery guarantee and ack timeout. */
@Command(name = "configure", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Set the delivery guarantee and ack timeout of ROOM (both replicated) and "
                + "print one record: room, atLeastOnce, ackTimeout (null when none).",
            "",
            "Options not given are reset to their defaults: at most once, no ack timeout."})
final class RoomConfigureCommand implements Callable<Integer> {
    static final List<Column> COLUMNS = List.of(
            Column.text("room", "ROOM"),
            Column.text("atLeastOnce", "AT_LEAST_ONCE"),
            Column.text("ackTimeout", "ACK_TIMEOUT"));

    @ParentCommand
    private RoomCommand group;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "ROOM", description = "The room.")
    private String room;

    @Option(names = "--at-least-once",
            description = "Keep the in-flight message until every SYNC member has acked it, so "
                    + "that a failover redelivers it (default: at most once).")
    private boolean atLeastOnce;

    @Option(names = "--ack-timeout", paramLabel = "D", converter = DurationConverter.class,
            description = "Evict a SYNC member that has not acked the in-flight message within D "
                    + "(at least 1s; default: never).")
    private Duration ackTimeout = Duration.ZERO;

    @Override
    public Integer call() {
        RoomCommand.requireRoom(spec, room);
        HourglassCommand root = group.root();
        RecordPrinter printer = root.printer(COLUMNS, spec.commandLine().getOut());
        try (HourglassClient client = root.openClient(b -> b)) {
            try {
                client.rooms().configure(room, atLeastOnce, ackTimeout);
            } catch (IllegalArgumentException e) {
                throw RoomCommand.usage(spec, e);
            }
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("room", room);
            record.put("atLeastOnce", atLeastOnce);
            record.put("ackTimeout", ackTimeout.isZero() ? null : DurationConverter.format(ackTimeout));
            printer.print(record);
        } finally {
            printer.flush();
        }
        return ExitCodes.OK;
    }
}
