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

/** {@code hourglass consumer}: the connected consumers. */
@Command(name = "consumer", mixinStandardHelpOptions = true,
        description = "Inspect connected consumers: list.",
        subcommands = {ConsumerCommand.ListConsumers.class})
final class ConsumerCommand implements Callable<Integer> {
    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: list");
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Print one record per consumer connected to the leader, of TOPIC or of every topic: "
                    + "id, topic, group (null for a universal consumer), buffered.")
    static final class ListConsumers implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(
                Column.text("id", "ID"),
                Column.text("topic", "TOPIC"),
                Column.text("group", "GROUP"),
                Column.text("buffered", "BUFFERED"));

        @ParentCommand
        private ConsumerCommand parent;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", arity = "0..1", paramLabel = "TOPIC", description = "Only this topic (default: all).")
        private String topic = "";

        @Override
        public Integer call() {
            return AdminSupport.print(parent.root, spec, COLUMNS,
                    admin -> admin.listConsumers(topic.strip()).stream().map(c -> {
                        Map<String, Object> record = new LinkedHashMap<>();
                        record.put("id", c.getId());
                        record.put("topic", c.getTopic());
                        record.put("group", c.getGroup().isEmpty() ? null : c.getGroup());
                        record.put("buffered", c.getBuffered());
                        return record;
                    }).toList());
        }
    }
}
