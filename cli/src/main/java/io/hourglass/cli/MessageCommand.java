package io.hourglass.cli;

import io.hourglass.api.v1.MessageInfo;
import io.hourglass.api.v1.PeekedMessage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass message}: one stored message by id (the id publish and consume print). */
@Command(name = "message", mixinStandardHelpOptions = true,
        description = "Inspect or delete one stored message: get, delete. Exit 5 when the topic holds no such message.",
        subcommands = {MessageCommand.Get.class, MessageCommand.Delete.class})
final class MessageCommand implements Callable<Integer> {
    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: get or delete");
    }

    /** What get and delete share: the message named by TOPIC and ID, and printing its records. */
    abstract static class OneMessage implements Callable<Integer> {
        @ParentCommand
        private MessageCommand group;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
        String topic;

        @Parameters(index = "1", paramLabel = "ID", description = "The message id.")
        private String id;

        String id() {
            return id.strip();
        }

        abstract List<Column> columns();

        abstract List<Map<String, Object>> records(io.hourglass.client.AdminClient admin);

        @Override
        public Integer call() {
            AdminSupport.require(spec, "TOPIC", topic);
            AdminSupport.require(spec, "ID", id);
            return AdminSupport.print(group.root, spec, columns(), this::records);
        }
    }

    @Command(name = "get", mixinStandardHelpOptions = true,
            description = "Print the stored message ID of TOPIC: id, topic, payload (whole, UTF-8), payloadBytes, "
                    + "headers, enqueuedAt, dueAt, expiresAt (null: never), producerId, ackedGroups, pendingGroups "
                    + "(durable groups that have / have not acknowledged it).")
    static final class Get extends OneMessage {
        static final List<Column> COLUMNS = List.of(
                Column.text("id", "ID"),
                Column.text("topic", "TOPIC"),
                Column.time("enqueuedAt", "ENQUEUED_AT"),
                Column.time("dueAt", "DUE_AT"),
                Column.time("expiresAt", "EXPIRES_AT"),
                Column.text("producerId", "PRODUCER_ID"),
                Column.custom("ackedGroups", "ACKED", AdminSupport::list),
                Column.custom("pendingGroups", "PENDING", AdminSupport::list),
                Column.text("payloadBytes", "BYTES"),
                Column.map("headers", "HEADERS"),
                Column.text("payload", "PAYLOAD"));

        @Override
        List<Column> columns() {
            return COLUMNS;
        }

        @Override
        List<Map<String, Object>> records(io.hourglass.client.AdminClient admin) {
            return List.of(record(admin.getMessage(topic, id())));
        }

        static Map<String, Object> record(MessageInfo info) {
            PeekedMessage m = info.getMessage();
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("id", m.getId());
            record.put("topic", info.getTopic());
            record.put("payload", m.getPayload().toStringUtf8());
            record.put("payloadBytes", m.getPayload().size());
            record.put("headers", new TreeMap<>(m.getHeadersMap()));
            record.put("enqueuedAt", m.getEnqueuedAtMs());
            record.put("dueAt", m.getDueAtMs());
            record.put("expiresAt", m.getExpiresAtMs() == 0 ? null : m.getExpiresAtMs());
            record.put("producerId", info.getProducerId().isEmpty() ? null : info.getProducerId());
            record.put("ackedGroups", List.copyOf(info.getAckedGroupsList()));
            record.put("pendingGroups", List.copyOf(info.getPendingGroupsList()));
            return record;
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true,
            description = "Delete the stored message ID of TOPIC through Raft, whatever its groups have acknowledged "
                    + "(a delivered copy is not redelivered); prints id, topic, deleted.")
    static final class Delete extends OneMessage {
        static final List<Column> COLUMNS = List.of(
                Column.text("id", "ID"), Column.text("topic", "TOPIC"), Column.text("deleted", "DELETED"));

        @Override
        List<Column> columns() {
            return COLUMNS;
        }

        @Override
        List<Map<String, Object>> records(io.hourglass.client.AdminClient admin) {
            admin.deleteMessage(topic, id());
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("id", id());
            record.put("topic", topic);
            record.put("deleted", true);
            return List.of(record);
        }
    }
}
