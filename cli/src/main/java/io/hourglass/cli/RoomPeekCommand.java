package io.hourglass.cli;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.QueuedRoomMessage;
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

/** {@code hourglass room peek}: lists the messages waiting in a room. */
@Command(name = "peek", sortOptions = false, mixinStandardHelpOptions = true,
        description = "Print one record per message waiting in ROOM, in release order (the one in "
                + "flight excluded): messageId, priority, payload (UTF-8), sentAt.")
final class RoomPeekCommand implements Callable<Integer> {
    static final List<Column> COLUMNS = List.of(
            Column.text("messageId", "MESSAGE_ID"),
            Column.text("priority", "PRIORITY"),
            Column.time("sentAt", "SENT_AT"),
            Column.text("payload", "PAYLOAD"));

    @ParentCommand
    private RoomCommand group;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "ROOM", description = "The room.")
    private String room;

    @Option(names = "--offset", paramLabel = "N", description = "Skip the first N (default: 0).")
    private int offset;

    @Option(names = "--limit", paramLabel = "N", description = "Print at most N (default: 100).")
    private int limit = 100;

    @Override
    public Integer call() {
        RoomCommand.requireRoom(spec, room);
        HourglassCommand root = group.root();
        RecordPrinter printer = root.printer(COLUMNS, spec.commandLine().getOut());
        try (HourglassClient client = root.openClient(b -> b)) {
            List<QueuedRoomMessage> messages;
            try {
                messages = client.rooms().peek(room, offset, limit);
            } catch (IllegalArgumentException e) {
                throw RoomCommand.usage(spec, e);
            }
            for (QueuedRoomMessage m : messages) {
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("messageId", m.messageId());
                record.put("priority", m.priority());
                record.put("payload", m.payloadUtf8());
                record.put("sentAt", m.sentAtMs());
                printer.print(record);
            }
            printer.finish();
        } finally {
            printer.flush();
        }
        return ExitCodes.OK;
    }
}
