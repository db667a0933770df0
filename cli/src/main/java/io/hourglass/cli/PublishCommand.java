package io.hourglass.cli;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass publish}: publishes one message, or {@code --count} numbered ones. */
@Command(name = "publish", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Publish messages to TOPIC and print one record per message: "
                + "id, topic, payload, dueAt.",
            "",
            "PAYLOAD is sent as UTF-8. Without PAYLOAD and without --count, the payload is "
                + "read from standard input as is (binary-safe, a trailing newline included: "
                + "use printf or echo -n). With --count N the payloads are PAYLOAD-0 ... "
                + "PAYLOAD-(N-1) (msg-0 ... when PAYLOAD is omitted), sent in batches of up to "
                + "500 with " + PublishCommand.IN_FLIGHT + " batches in flight (each batch is one log entry "
                + "and stays in order; batches in flight together may commit in either order: "
                + "--in-order sends one at a time). Progress goes to stderr every second, and a "
                + "throughput summary at the end."})
final class PublishCommand implements Callable<Integer> {
    static final List<Column> COLUMNS = List.of(
            Column.text("id", "ID"),
            Column.text("topic", "TOPIC"),
            Column.time("dueAt", "DUE_AT"),
            Column.text("payload", "PAYLOAD"));
    /** With --key: the record adds the id the message replaced, or null. */
    static final List<Column> KEYED_COLUMNS = java.util.stream.Stream.concat(COLUMNS.stream(),
            java.util.stream.Stream.of(Column.text("replaced", "REPLACED"))).toList();

    /** Messages kept outstanding with --count; results are printed in order as the window slides. */
    private static final int WINDOW = 4_000;
    /** Publish requests in flight at once with --count (unless --in-order). */
    static final int IN_FLIGHT = 4;
    private static final long PROGRESS_EVERY_NANOS = 1_000_000_000L;

    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
    private String topic;

    @Parameters(index = "1", arity = "0..1", paramLabel = "PAYLOAD",
            description = "The payload (default: standard input; with --count: msg).")
    private String payload;

    @Option(names = "--delay", paramLabel = "D", converter = DurationConverter.class,
            description = "Deliver after D (500ms, 5s, 1m30s, 2h; default: at once).")
    private Duration delay = Duration.ZERO;

    @Option(names = "--ttl", paramLabel = "D", converter = DurationConverter.class,
            description = "Expire D after the due time (default: never).")
    private Duration ttl = Duration.ZERO;

    @Option(names = "--count", paramLabel = "N",
            description = "Publish N messages, PAYLOAD-0 ... PAYLOAD-(N-1).")
    private Integer count;

    @Option(names = "--header", paramLabel = "k=v", description = "A header; repeatable.")
    private Map<String, String> headers = new LinkedHashMap<>();

    @Option(names = "--key", paramLabel = "K",
            description = "A schedule key, unique among the topic's pending messages: publishing again with K while "
                    + "the first is pending replaces it (payload, headers, delay, TTL); the record adds replaced, the "
                    + "id it replaced (null: none). Not with --count.")
    private String key;

    @Option(names = "--every", paramLabel = "D", converter = DurationConverter.Positive.class,
            description = "With --key: the message recurs every D (at least 1s), each firing its own message, until "
                    + "'hourglass cancel TOPIC --key K'; the first firing after --delay, or after D without one. A "
                    + "firing missed while no leader ran is skipped, not caught up.")
    private java.time.Duration every;

    @Option(names = {"-q", "--quiet"}, description = "Print no records (e.g. when measuring throughput).")
    private boolean quiet;

    @Option(names = "--in-order", description = "With --count: one batch in flight at a time, so that the "
            + "batches commit in the order they are numbered (slower).")
    private boolean inOrder;

    @Override
    public Integer call() {
        if (count != null && count < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--count must be at least 1, got " + count);
        }
        if (key != null && count != null) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--key and --count do not go together: each message would replace the one before");
        }
        if (every != null && key == null) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--every needs --key: a recurring message is cancelled by its key");
        }
        if (key != null && key.isEmpty()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--key must not be empty");
        }
        PrintWriter out = spec.commandLine().getOut();
        RecordPrinter printer = root.printer(key == null ? COLUMNS : KEYED_COLUMNS, out);
        // A single message needs no window; --in-order keeps numbered batches in commit order.
        int inFlight = count == null || inOrder ? 1 : IN_FLIGHT;
        try (HourglassClient client = root.openClient(b -> b.maxInFlightBatches(inFlight))) {
            if (count == null) {
                byte[] body = payload != null ? payload.getBytes(StandardCharsets.UTF_8) : readStdin();
                Message message = message(body);
                print(printer, message, client.publish(message));
            } else {
                publishNumbered(client, printer);
            }
        } finally {
            printer.flush();
        }
        return ExitCodes.OK;
    }

    private void publishNumbered(HourglassClient client, RecordPrinter printer) {
        String prefix = payload != null ? payload : "msg";
        record Sent(Message message, CompletableFuture<PublishResult> result) {
        }
        ArrayDeque<Sent> window = new ArrayDeque<>();
        long start = System.nanoTime();
        long nextProgress = start + PROGRESS_EVERY_NANOS;
        PrintWriter err = spec.commandLine().getErr();
        int done = 0;
        for (int i = 0; i < count; i++) {
            Message message = message((prefix + "-" + i).getBytes(StandardCharsets.UTF_8));
            window.add(new Sent(message, client.publishAsync(message)));
            if (window.size() >= WINDOW) {
                Sent head = window.poll();
                print(printer, head.message(), head.result().join());
                done++;
                nextProgress = progress(err, done, start, nextProgress);
            }
        }
        client.flush();
        while (!window.isEmpty()) {
            Sent head = window.poll();
            print(printer, head.message(), head.result().join());
            done++;
            nextProgress = progress(err, done, start, nextProgress);
        }
        double seconds = Math.max(System.nanoTime() - start, 1) / 1e9;
        err.println(String.format(Locale.ROOT, "published %d messages in %.3f s (%.0f msg/s)",
                count, seconds, count / seconds));
        err.flush();
    }

    /** Writes a progress line when a second has passed since the last; returns when the next one is due. */
    private long progress(PrintWriter err, int done, long start, long nextProgress) {
        long now = System.nanoTime();
        if (now < nextProgress) {
            return nextProgress;
        }
        double seconds = Math.max(now - start, 1) / 1e9;
        err.println(String.format(Locale.ROOT, "published %d/%d (%.0f msg/s)", done, count, done / seconds));
        err.flush();
        return now + PROGRESS_EVERY_NANOS;
    }

    private Message message(byte[] body) {
        try {
            return Message.builder(topic).payload(body).headers(headers).delay(delay).ttl(ttl).key(key).every(every)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        }
    }

    private void print(RecordPrinter printer, Message message, PublishResult result) {
        if (quiet) {
            return;
        }
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("id", result.id());
        record.put("topic", message.topic());
        record.put("payload", new String(message.payload(), StandardCharsets.UTF_8));
        record.put("dueAt", result.dueAtMs());
        if (key != null) {
            record.put("replaced", result.replacedId().isEmpty() ? null : result.replacedId());
        }
        printer.print(record);
    }

    private byte[] readStdin() {
        try {
            return root.stdin().readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the payload from standard input", e);
        }
    }
}
