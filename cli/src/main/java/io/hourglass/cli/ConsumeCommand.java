package io.hourglass.cli;

import io.hourglass.client.DeliveryContext;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.ReceivedMessage;
import io.hourglass.client.SubscribeOptions;
import io.hourglass.client.Subscription;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass consume}: prints deliveries of a topic and settles them. */
@Command(name = "consume", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Consume TOPIC and print one record per delivery: tag, topic, payload "
                + "(UTF-8), headers, enqueuedAt, dueAt, deliveredAt, attempt.",
            "",
            "Each delivery is ACKed after it is printed, unless --nack or --no-ack. Stops after "
                + "--count deliveries or after --timeout without one, and exits 0; with neither "
                + "it runs until interrupted (Ctrl-C). --timeout runs only while subscribed: a "
                + "refused subscription fails at once (exit 3, 5), and one no server accepts "
                + "fails after --deadline (exit 4). Reconnects on its own when the stream fails."})
final class ConsumeCommand implements Callable<Integer> {
    static final List<Column> COLUMNS = List.of(
            Column.text("tag", "TAG"),
            Column.text("topic", "TOPIC"),
            Column.text("attempt", "ATTEMPT"),
            Column.time("enqueuedAt", "ENQUEUED_AT"),
            Column.time("dueAt", "DUE_AT"),
            Column.time("deliveredAt", "DELIVERED_AT"),
            Column.map("headers", "HEADERS"),
            Column.text("payload", "PAYLOAD"));

    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TOPIC", description = "The topic.")
    private String topic;

    @Option(names = "--group", paramLabel = "G",
            description = "Consumer group: consumers of one group share the messages "
                    + "(default: none, a universal consumer that gets every message).")
    private String group = "";

    @Option(names = "--count", paramLabel = "N", description = "Stop after N deliveries. The server then hands out at most N (up to 128; "
            + "N with --no-ack) unsettled at once, so at most that many are sent and not seen when it stops.")
    private Integer count;

    @Option(names = "--timeout", paramLabel = "D", converter = DurationConverter.class,
            description = "Stop after D without a delivery (500ms, 5s, 1m; default: never).")
    private Duration timeout;

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    private Settle settle;

    @Option(names = "--confirm",
            description = "Ask for each ACK to be confirmed (the deletion replicated) and wait for "
                    + "every confirmation before exiting; fail (exit 4) if one does not come within "
                    + "--deadline. Up to " + CONFIRM_WINDOW + " confirmations are outstanding at once.")
    private boolean confirm;

    /** Confirmations outstanding at once with --confirm: one replicated round trip per window. */
    static final int CONFIRM_WINDOW = 256;

    /** --nack | --no-ack (default: ack). */
    static final class Settle {
        @Option(names = "--nack", description = "NACK each delivery instead (it is redelivered).")
        boolean nack;

        @Option(names = "--no-ack", description = "Neither ACK nor NACK (redelivered after the "
                + "server's in-flight timeout).")
        boolean noAck;

        @Option(names = "--nack-delay", paramLabel = "D", converter = DurationConverter.Positive.class,
                description = "NACK each delivery to be redelivered no earlier than D from now (for a group, "
                        + "replicated: a new leader waits too).")
        java.time.Duration nackDelay;
    }

    @Override
    public Integer call() throws Exception {
        if (topic.isBlank()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "TOPIC must not be empty");
        }
        boolean ack = settle == null || (!settle.nack && !settle.noAck && settle.nackDelay == null);
        if (confirm && !ack) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--confirm cannot be combined with --nack or --no-ack");
        }
        if (count != null && count < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--count must be at least 1, got " + count);
        }
        if (timeout != null && timeout.isZero()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--timeout must be positive");
        }
        RecordPrinter printer = root.printer(COLUMNS, spec.commandLine().getOut());
        ConsumeProgress progress = new ConsumeProgress(count == null ? 0 : count);
        ConfirmWindow confirms = new ConfirmWindow(CONFIRM_WINDOW, root.deadline());
        SubscribeOptions options = SubscribeOptions.DEFAULT.withGiveUpAfter(root.deadline())
                .withMaxUnacked(maxUnacked(count, settle != null && settle.noAck));
        try (HourglassClient client = root.openClient(b -> b)) {
            Subscription subscription = client.subscribe(topic, group, options,
                    (message, context) -> onDelivery(message, context, ack, printer, progress, confirms));
            subscription.terminated().whenComplete((v, e) -> progress.end(e));
            try {
                // --timeout counts only while a stream is up: a subscription that never works
                // fails after --deadline (exit 4), or at once when refused (exit 3), instead.
                progress.await(timeout, subscription::isSubscribed);
                if (confirm) {
                    // Before close: the server answers only an open stream.
                    progress.stopClaiming(root.deadline());
                    confirms.awaitAll();
                    if (progress.failure() instanceof Exception e) {
                        throw e;
                    }
                }
                printer.finish();
            } finally {
                subscription.close();
                printer.flush();
            }
        }
        return ExitCodes.OK;
    }

    /**
     * The prefetch limit for {@code --count}: the server hands out no more than this beyond what was
     * settled, so a consume that stops after N leaves at most that many sent-but-unseen (each counts
     * as a delivery attempt) instead of gRPC's whole window (~1 500 of 640 bytes). Unsettled
     * ({@code --no-ack}), exactly N; otherwise N up to the client's buffer. No limit without --count.
     */
    static int maxUnacked(Integer count, boolean noAck) {
        if (count == null) {
            return 0;
        }
        return noAck ? count : Math.min(count, SubscribeOptions.DEFAULT.maxBuffered());
    }

    private void onDelivery(ReceivedMessage message, DeliveryContext context, boolean ack,
                            RecordPrinter printer, ConsumeProgress progress, ConfirmWindow confirms) {
        if (!progress.claim()) {
            return; // past --count: left unsettled, released when the stream closes
        }
        try {
            printer.print(record(message));
            printer.flush();
            if (!ack) {
                if (settle.nackDelay != null) {
                    context.nack(settle.nackDelay);
                } else if (settle.nack) {
                    context.nack();
                }
            } else if (confirm) {
                confirms.add(message.id(), context.ackConfirmed());
            } else {
                context.ack();
            }
            progress.handled();
        } catch (Exception e) {
            progress.end(e);
        }
    }

    private static Map<String, Object> record(ReceivedMessage m) {
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("tag", HexFormat.of().formatHex(m.tag()));
        record.put("topic", m.topic());
        record.put("payload", m.payloadUtf8());
        record.put("headers", new TreeMap<>(m.headers()));
        record.put("enqueuedAt", m.enqueuedAtMs());
        record.put("dueAt", m.dueAtMs());
        record.put("deliveredAt", m.deliveredAtMs());
        record.put("attempt", m.attempt());
        return record;
    }
}
