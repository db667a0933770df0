package io.hourglass.cli;

import io.hourglass.client.HourglassClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass room send}: sends one message to a room. */
@Command(name = "send", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Send PAYLOAD to ROOM and print one record: room, messageId, priority, oob.",
            "",
            "PAYLOAD is sent as UTF-8; without it, the payload is read from standard input as is. "
                + "The message is queued by priority (lower first, then in send order) and "
                + "released when every SYNC subscriber has acked the one before; with --oob it "
                + "goes at once to every current subscriber, unqueued and unacked (dropped when "
                + "the room has none)."})
final class RoomSendCommand implements Callable<Integer> {
    static final List<Column> COLUMNS = List.of(
            Column.text("room", "ROOM"),
            Column.text("messageId", "MESSAGE_ID"),
            Column.text("priority", "PRIORITY"),
            Column.text("oob", "OOB"));

    @ParentCommand
    private RoomCommand group;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "ROOM", description = "The room.")
    private String room;

    @Parameters(index = "1", arity = "0..1", paramLabel = "PAYLOAD",
            description = "The payload (default: standard input).")
    private String payload;

    @Option(names = "--priority", paramLabel = "N",
            description = "Lower is released first; negatives allowed (default: 0).")
    private Integer priority;

    @Option(names = "--oob", description = "Send out of band: at once, bypassing the queue and the gate.")
    private boolean oob;

    @Override
    public Integer call() {
        RoomCommand.requireRoom(spec, room);
        if (oob && priority != null) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--priority cannot be combined with --oob (out-of-band messages are not queued)");
        }
        int n = priority == null ? 0 : priority;
        byte[] body = payload != null ? payload.getBytes(StandardCharsets.UTF_8) : readStdin();
        HourglassCommand root = group.root();
        RecordPrinter printer = root.printer(COLUMNS, spec.commandLine().getOut());
        try (HourglassClient client = root.openClient(b -> b)) {
            String messageId = oob ? client.rooms().sendOutOfBand(room, body).messageId()
                    : client.rooms().send(room, body, n);
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("room", room);
            record.put("messageId", messageId);
            record.put("priority", n);
            record.put("oob", oob);
            printer.print(record);
        } finally {
            printer.flush();
        }
        return ExitCodes.OK;
    }

    private byte[] readStdin() {
        try {
            return group.root().stdin().readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the payload from standard input", e);
        }
    }
}
