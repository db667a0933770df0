package io.hourglass.cli;

import io.hourglass.api.v1.PeekedMessage;
import io.hourglass.api.v1.TopicInfo;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass topic}: list, stats, purge, peek, schedule. */
@Command(name = "topic", mixinStandardHelpOptions = true,
        description = "Inspect topics: list, stats, purge, peek, schedule.",
        subcommands = {TopicCommand.ListTopics.class, TopicCommand.Stats.class, TopicCommand.Purge.class,
            TopicCommand.Peek.class, TopicCommand.Schedule.class})
final class TopicCommand implements Callable<Integer> {
    static final List<Column> INFO_COLUMNS = List.of(
            Column.text("topic", "TOPIC"),
            Column.text("pending", "PENDING"),
            Column.text("dueNow", "DUE_NOW"),
            Column.text("scheduled", "SCHEDULED"),
            Column.text("inFlight", "IN_FLIGHT"),
            Column.text("consumers", "CONSUMERS"),
            Column.text("oldestDueLatenessMs", "OLDEST_DUE_LATENESS_MS"),
            Column.text("expiringSoon", "EXPIRING_SOON"),
            Column.custom("groups", "GROUPS", AdminSupport::list),
            Column.custom("pendingPerGroup", "PENDING_PER_GROUP", AdminSupport::map));

    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "missing subcommand: list, stats, purge or peek");
    }

    static Map<String, Object> info(TopicInfo t) {
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("topic", t.getTopic());
        record.put("pending", t.getPending());
        record.put("dueNow", t.getDueNow());
        record.put("scheduled", t.getScheduled());
        record.put("inFlight", t.getInFlight());
        record.put("groups", List.copyOf(t.getGroupsList()));
        record.put("consumers", t.getConsumers());
        record.put("oldestDueLatenessMs", t.getOldestDueLatenessMs());
        record.put("expiringSoon", t.getExpiringSoon());
        record.put("pendingPerGroup", new TreeMap<>(t.getPendingPerGroupMap()));
        return record;
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Print one record per topic: topic, pending, dueNow, scheduled, inFlight, groups, "
                    + "consumers, oldestDueLatenessMs, expiringSoon, pendingPerGroup.")
    static final class ListTopics implements Callable<Integer> {
        @ParentCommand
        private TopicCommand group;

        @Spec
        private CommandSpec spec;

        @Option(names = "--prefix", paramLabel = "TEXT", description = "Only topics whose name starts with TEXT.")
        private String prefix = "";

        @Option(names = "--offset", paramLabel = "N", description = "Skip the first N topics (by name; default 0).")
        private int offset;

        @Option(names = "--limit", paramLabel = "N", description = "At most N topics (default 0: all).")
        private int limit;

        @Override
        public Integer call() {
            return AdminSupport.print(group.root, spec, INFO_COLUMNS,
                    admin -> admin.listTopics(prefix, offset, limit).getTopicsList().stream().map(TopicCommand::info)
                            .toList());
        }
    }

    @Command(name = "stats", mixinStandardHelpOptions = true,
            description = "Print one record for TOPIC, with the fields of 'topic list'.")
    static final class Stats implements Callable<Integer> {
        @ParentCommand
        private TopicCommand group;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
        private String topic;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "TOPIC", topic);
            return AdminSupport.print(group.root, spec, INFO_COLUMNS,
                    admin -> List.of(info(admin.topicStats(topic))));
        }
    }

    @Command(name = "purge", mixinStandardHelpOptions = true,
            description = {"Delete every stored message of TOPIC; prints topic and purged (how many).",
                "Asks for --yes, except with --output json (scripts)."})
    static final class Purge implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(Column.text("topic", "TOPIC"), Column.text("purged", "PURGED"));

        @ParentCommand
        private TopicCommand group;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
        private String topic;

        @Option(names = {"-y", "--yes"}, description = "Purge without asking; needed in table mode.")
        private boolean yes;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "TOPIC", topic);
            if (!yes && !group.root.isJson()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "this deletes every stored message of '"
                        + AdminSupport.shorten(topic) + "' for good; add --yes to do it");
            }
            return AdminSupport.print(group.root, spec, COLUMNS, admin -> {
                long purged = admin.purgeTopic(topic);
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("topic", topic);
                record.put("purged", purged);
                return List.of(record);
            });
        }
    }

    @Command(name = "schedule", mixinStandardHelpOptions = true,
            description = {"Print how many stored messages of TOPIC fall due in each --bucket of the window "
                    + "[--from, --until): one record per bucket (from, until, count), empty ones included. Counted "
                    + "from the keys of the time index (no message is read), on the node asked.",
                "A last line on stderr gives the messages due before the window (due now, in flight, "
                    + "overdue) and after it. The window defaults to now (rounded down to a whole bucket) until 60 "
                    + "buckets later."})
    static final class Schedule implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(
                Column.time("from", "FROM"), Column.time("until", "UNTIL"), Column.text("count", "COUNT"));

        @ParentCommand
        private TopicCommand group;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
        private String topic;

        @Option(names = "--bucket", paramLabel = "D", converter = DurationConverter.Positive.class,
                description = "The bucket width (default: 1m).")
        private java.time.Duration bucket = java.time.Duration.ofMinutes(1);

        @picocli.CommandLine.Mixin
        private DueWindow window;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "TOPIC", topic);
            long[] outside = new long[2];
            int code = AdminSupport.print(group.root, spec, COLUMNS, admin -> {
                var response = admin.topicSchedule(topic, bucket.toMillis(), window.fromMs(), window.untilMs());
                outside[0] = response.getBefore();
                outside[1] = response.getAfter();
                return response.getBucketsList().stream().map(b -> {
                    Map<String, Object> record = new LinkedHashMap<>();
                    record.put("from", b.getFromMs());
                    record.put("until", b.getUntilMs());
                    record.put("count", b.getCount());
                    return record;
                }).toList();
            });
            spec.commandLine().getErr().println(outside[0] + " due before the window, " + outside[1] + " after it");
            spec.commandLine().getErr().flush();
            return code;
        }
    }

    @Command(name = "peek", mixinStandardHelpOptions = true,
            description = {"Print up to --limit stored messages of TOPIC in due order, without consuming them: id, "
                    + "topic, payload (UTF-8), payloadBytes, headers, enqueuedAt, dueAt, expiresAt (null when it "
                    + "never expires).",
                "Payloads longer than " + Payloads.PREVIEW_CHARS + " characters are cut to that many plus "
                    + "'…(N bytes)' unless --full. The server answers in pages under the gRPC message limit; "
                    + "they are followed up to --limit."})
    static final class Peek implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(
                Column.text("id", "ID"),
                Column.text("topic", "TOPIC"),
                Column.time("enqueuedAt", "ENQUEUED_AT"),
                Column.time("dueAt", "DUE_AT"),
                Column.time("expiresAt", "EXPIRES_AT"),
                Column.text("payloadBytes", "BYTES"),
                Column.map("headers", "HEADERS"),
                Column.text("payload", "PAYLOAD"));

        @ParentCommand
        private TopicCommand group;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
        private String topic;

        @Option(names = "--limit", paramLabel = "N", description = "Print at most N, 1..10000 (default: 20).")
        private int limit = 20;

        @Option(names = "--full", description = "Print whole payloads.")
        private boolean full;

        @picocli.CommandLine.Mixin
        private DueWindow window;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "TOPIC", topic);
            if (limit < 1 || limit > 10_000) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--limit must be between 1 and 10000, got " + limit);
            }
            return AdminSupport.print(group.root, spec, COLUMNS,
                    admin -> admin.peekTopic(topic, limit, window.fromMs(), window.untilMs()).stream()
                            .map(this::record).toList());
        }

        private Map<String, Object> record(PeekedMessage m) {
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("id", m.getId());
            record.put("topic", topic);
            record.put("payload", full ? m.getPayload().toStringUtf8() : Payloads.preview(m.getPayload()));
            record.put("payloadBytes", m.getPayload().size());
            record.put("headers", new TreeMap<>(m.getHeadersMap()));
            record.put("enqueuedAt", m.getEnqueuedAtMs());
            record.put("dueAt", m.getDueAtMs());
            record.put("expiresAt", m.getExpiresAtMs() == 0 ? null : m.getExpiresAtMs());
            return record;
        }
    }
}
