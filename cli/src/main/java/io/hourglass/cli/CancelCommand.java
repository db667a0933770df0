package io.hourglass.cli;

import io.hourglass.client.CancelResult;
import io.hourglass.client.HourglassClient;
import java.io.PrintWriter;
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

/**
 * {@code hourglass cancel TOPIC ID}: a producer's cancel of one pending message (DESIGN §9).
 * Exit 0 when it won (no copy had gone out); exit 5 with one line on stderr when a copy had gone
 * out already (the message is deleted all the same and not redelivered), or when the topic holds
 * no such pending message.
 */
@Command(name = "cancel", mixinStandardHelpOptions = true,
        description = "Cancel the pending message ID of TOPIC (the id publish printed), or the one with --key K, through "
                + "Raft; prints id (or key), topic, "
                + "outcome (cancelled | already-delivered). Exit 0 when no copy had gone out, so nobody receives it; "
                + "exit 5 when one had (it is deleted all the same and not redelivered) or the topic holds no such "
                + "pending message.")
final class CancelCommand implements Callable<Integer> {
    static final List<Column> COLUMNS = List.of(
            Column.text("id", "ID"), Column.text("topic", "TOPIC"), Column.text("outcome", "OUTCOME"));
    static final List<Column> KEY_COLUMNS = List.of(
            Column.text("key", "KEY"), Column.text("topic", "TOPIC"), Column.text("outcome", "OUTCOME"));

    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
    private String topic;

    @Parameters(index = "1", arity = "0..1", paramLabel = "ID", description = "The message id (or --key).")
    private String id;

    @Option(names = "--key", paramLabel = "K", description = "Cancel the topic's pending message with schedule key K "
            + "instead of naming its id.")
    private String key;

    @Override
    public Integer call() {
        AdminSupport.require(spec, "TOPIC", topic);
        if ((id == null) == (key == null)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "name the message: ID or --key K");
        }
        String named = key != null ? AdminSupport.require(spec, "--key", key) : AdminSupport.require(spec, "ID", id).strip();
        CancelResult result;
        try (HourglassClient client = root.openClient(b -> b)) {
            result = key != null ? client.cancelKey(topic, named) : client.cancel(topic, named);
        }
        Map<String, Object> record = new LinkedHashMap<>();
        record.put(key != null ? "key" : "id", named);
        record.put("topic", topic);
        record.put("outcome", result == CancelResult.CANCELLED ? "cancelled" : "already-delivered");
        RecordPrinter printer = root.printer(key != null ? KEY_COLUMNS : COLUMNS, spec.commandLine().getOut());
        printer.print(record);
        printer.finish();
        printer.flush();
        if (result == CancelResult.CANCELLED) {
            return ExitCodes.OK;
        }
        PrintWriter err = spec.commandLine().getErr();
        err.println("hourglass: message " + (key != null ? "with key '" + AdminSupport.shorten(named) + "'" : named)
                + " of topic " + AdminSupport.shorten(topic)
                + " was already delivered; it is deleted now and will not be redelivered");
        err.flush();
        return ExitCodes.NOT_FOUND;
    }
}
