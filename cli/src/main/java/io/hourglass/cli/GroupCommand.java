package io.hourglass.cli;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass group}: the durable consumer groups of a topic. */
@Command(name = "group", mixinStandardHelpOptions = true,
        description = "Inspect and delete the durable consumer groups of a topic: list, delete.",
        subcommands = {GroupCommand.ListGroups.class, GroupCommand.Delete.class})
final class GroupCommand implements Callable<Integer> {
    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: list or delete");
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Print one record per durable group of TOPIC: topic, group, pending (not yet "
                    + "acknowledged by the group), consumers.")
    static final class ListGroups implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(
                Column.text("topic", "TOPIC"),
                Column.text("group", "GROUP"),
                Column.text("pending", "PENDING"),
                Column.text("consumers", "CONSUMERS"));

        @ParentCommand
        private GroupCommand parent;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
        private String topic;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "TOPIC", topic);
            return AdminSupport.print(parent.root, spec, COLUMNS, admin -> admin.listGroups(topic).stream().map(g -> {
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("topic", topic);
                record.put("group", g.getGroup());
                record.put("pending", g.getPending());
                record.put("consumers", g.getConsumers());
                return record;
            }).toList());
        }
    }

    @Command(name = "delete", mixinStandardHelpOptions = true,
            description = "Delete durable group GROUP of TOPIC (its progress is lost); prints topic, group, deleted.")
    static final class Delete implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(
                Column.text("topic", "TOPIC"),
                Column.text("group", "GROUP"),
                Column.text("deleted", "DELETED"));

        @ParentCommand
        private GroupCommand parent;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
        private String topic;

        @Parameters(index = "1", paramLabel = "GROUP", description = "The group.")
        private String group;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "TOPIC", topic);
            AdminSupport.require(spec, "GROUP", group);
            return AdminSupport.print(parent.root, spec, COLUMNS, admin -> {
                admin.deleteGroup(topic, group);
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("topic", topic);
                record.put("group", group);
                record.put("deleted", true);
                return List.of(record);
            });
        }
    }
}
