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
        description = "Inspect, configure and delete the durable consumer groups of a topic: list, configure, delete.",
        subcommands = {GroupCommand.ListGroups.class, GroupCommand.Configure.class, GroupCommand.Delete.class})
final class GroupCommand implements Callable<Integer> {
    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: list, configure or delete");
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Print one record per durable group of TOPIC: topic, group, pending (not yet "
                    + "acknowledged by the group), consumers, backoff, maxDeliveries, deadLetter.")
    static final class ListGroups implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(
                Column.text("topic", "TOPIC"),
                Column.text("group", "GROUP"),
                Column.text("pending", "PENDING"),
                Column.text("consumers", "CONSUMERS"),
                Column.text("backoff", "BACKOFF"),
                Column.text("maxDeliveries", "MAX_DELIVERIES"),
                Column.text("deadLetter", "DEAD_LETTER"));

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
                putPolicy(record, g);
                return record;
            }).toList());
        }
    }

    /** A group's policy as its records show it: back-off steps joined by commas (empty: none). */
    static void putPolicy(Map<String, Object> record, io.hourglass.api.v1.GroupInfo g) {
        record.put("backoff", String.join(",", g.getBackoffMsList().stream()
                .map(ms -> DurationConverter.format(java.time.Duration.ofMillis(ms))).toList()));
        record.put("maxDeliveries", g.getMaxDeliveries());
        record.put("deadLetter", g.getDeadLetterTopic());
    }

    @Command(name = "configure", mixinStandardHelpOptions = true,
            description = {"Set the redelivery policy of durable group GROUP of TOPIC (the group is created if "
                    + "needed); options not given keep their value. Prints topic, group, backoff, maxDeliveries, "
                    + "deadLetter.",
                    "A NACK without a delay, or an in-flight timeout, waits the back-off step of the attempt that "
                    + "failed (the last step repeats). After --max-deliveries deliveries without an ACK the message "
                    + "moves to the --dead-letter topic, with hourglass-dead-letter-{topic,group,id,deliveries,reason} "
                    + "headers."})
    static final class Configure implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(
                Column.text("topic", "TOPIC"),
                Column.text("group", "GROUP"),
                Column.text("backoff", "BACKOFF"),
                Column.text("maxDeliveries", "MAX_DELIVERIES"),
                Column.text("deadLetter", "DEAD_LETTER"));

        @ParentCommand
        private GroupCommand parent;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
        private String topic;

        @Parameters(index = "1", paramLabel = "GROUP", description = "The group.")
        private String group;

        @CommandLine.Option(names = "--backoff", paramLabel = "D[,D...]",
                description = "Waits before successive redeliveries, e.g. 1s,5s,30s; 'none' clears them.")
        private String backoff;

        @CommandLine.Option(names = "--max-deliveries", paramLabel = "N",
                description = "Deliveries without an ACK after which the message moves to the dead-letter topic; 0: unlimited.")
        private Integer maxDeliveries;

        @CommandLine.Option(names = "--dead-letter", paramLabel = "TOPIC2",
                description = "The topic messages past --max-deliveries move to; 'none' clears it.")
        private String deadLetter;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "TOPIC", topic);
            AdminSupport.require(spec, "GROUP", group);
            List<java.time.Duration> steps = backoff == null ? null : backoffSteps(backoff);
            if (maxDeliveries != null && maxDeliveries < 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--max-deliveries must not be negative");
            }
            if (steps == null && maxDeliveries == null && deadLetter == null) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "nothing to configure: give --backoff, --max-deliveries or --dead-letter");
            }
            String dl = deadLetter == null ? null : deadLetter.equals("none") ? "" : deadLetter;
            return AdminSupport.print(parent.root, spec, COLUMNS, admin -> {
                io.hourglass.api.v1.GroupInfo g = admin.configureGroup(topic, group, steps, maxDeliveries, dl);
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("topic", topic);
                record.put("group", group);
                putPolicy(record, g);
                return List.of(record);
            });
        }

        private List<java.time.Duration> backoffSteps(String text) {
            if (text.strip().equals("none")) {
                return List.of();
            }
            List<java.time.Duration> out = new java.util.ArrayList<>();
            for (String part : text.split(",", -1)) {
                try {
                    java.time.Duration d = DurationConverter.parse(part);
                    if (d.isZero()) {
                        throw new CommandLine.TypeConversionException("a step must be more than zero");
                    }
                    out.add(d);
                } catch (CommandLine.TypeConversionException e) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "--backoff: '"
                            + (part.length() > 32 ? part.substring(0, 32) + "…" : part) + "' is not a duration (" + e.getMessage() + ")");
                }
            }
            return out;
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
