package io.hourglass.cli;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.RoomStatus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass room state}: one room's backlog, members and in-flight message. */
@Command(name = "state", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Print the state of ROOM as one record: room, backlog (waiting messages, "
                + "the in-flight one excluded), members (the SYNC members: clientId, lastSeen, "
                + "ready = has acked the in-flight message), inFlight (its id, null when none), "
                + "listeners (ASYNC subscriptions), atLeastOnce, ackTimeout (null when none), "
                + "recovering (after a failover, until the members have resubscribed)."})
final class RoomStateCommand implements Callable<Integer> {
    static final List<Column> COLUMNS = List.of(
            Column.text("room", "ROOM"),
            Column.text("backlog", "BACKLOG"),
            Column.text("inFlight", "IN_FLIGHT"),
            Column.text("listeners", "LISTENERS"),
            Column.text("atLeastOnce", "AT_LEAST_ONCE"),
            Column.text("ackTimeout", "ACK_TIMEOUT"),
            Column.text("recovering", "RECOVERING"),
            Column.custom("members", "MEMBERS", RoomStateCommand::members));

    @ParentCommand
    private RoomCommand group;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "ROOM", description = "The room.")
    private String room;

    @Override
    public Integer call() {
        RoomCommand.requireRoom(spec, room);
        HourglassCommand root = group.root();
        RecordPrinter printer = root.printer(COLUMNS, spec.commandLine().getOut());
        try (HourglassClient client = root.openClient(b -> b)) {
            printer.print(record(client.rooms().state(room)));
        } finally {
            printer.flush();
        }
        return ExitCodes.OK;
    }

    static Map<String, Object> record(RoomStatus s) {
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("room", s.room());
        record.put("backlog", s.backlog());
        record.put("members", s.members().stream().map(m -> {
            Map<String, Object> member = new LinkedHashMap<>();
            member.put("clientId", m.clientId());
            member.put("lastSeen", m.lastSeenMs());
            member.put("ready", m.ready());
            return member;
        }).toList());
        record.put("inFlight", s.inFlight().isEmpty() ? null : s.inFlight());
        record.put("listeners", s.listeners());
        record.put("atLeastOnce", s.atLeastOnce());
        record.put("ackTimeout", s.ackTimeout().isZero() ? null : DurationConverter.format(s.ackTimeout()));
        record.put("recovering", s.recovering());
        return record;
    }

    /** The table cell of the members: {@code c-1 ready (seen 2024-…Z), c-2 waiting (…)}. */
    private static String members(Object value) {
        List<?> members = (List<?>) value;
        if (members.isEmpty()) {
            return "-";
        }
        return members.stream().map(o -> (Map<?, ?>) o)
                .map(m -> m.get("clientId") + (Boolean.TRUE.equals(m.get("ready")) ? " ready" : " waiting")
                        + " (seen " + Column.formatTime(m.get("lastSeen")) + ")")
                .collect(Collectors.joining(", "));
    }
}
