package io.hourglass.cli;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.HourglassClientException;
import io.hourglass.client.ReceivedRoomMessage;
import io.hourglass.client.RoomEjection;
import io.hourglass.client.RoomHandler;
import io.hourglass.client.RoomMode;
import io.hourglass.client.RoomReply;
import io.hourglass.client.RoomSession;
import io.hourglass.client.RoomSessionOptions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass room join}: takes part in a room and prints what it receives. */
@Command(name = "join", sortOptions = false, mixinStandardHelpOptions = true,
        description = {"Join ROOM (as a SYNC member, or a listener with --async) and print one "
                + "record per delivery: room, messageId, priority, payload (UTF-8), oob, ackable, "
                + "deliveredAt; and one per event: {event: joined, room, clientId} once the "
                + "server has accepted the subscription (again after a reconnect, with the new "
                + "client id), {event: ejected, room, reason} when the server removed the "
                + "session (TIMEOUT, ACK_TIMEOUT), which ends the command.",
            "",
            "Each ackable delivery is acked after it is printed (after --ack-delay), unless "
                + "--no-ack: the room releases its next message once every SYNC member has "
                + "acked. The session pings on its own. Stops after --count deliveries or after "
                + "--timeout without one, and exits 0; with neither it runs until interrupted "
                + "(Ctrl-C). Reconnects when the stream fails (resubscribing, still holding an "
                + "unacked message), giving up (exit 4) after --deadline without a server."})
final class RoomJoinCommand implements Callable<Integer> {
    static final List<Column> COLUMNS = List.of(
            Column.text("event", "EVENT"),
            Column.text("room", "ROOM"),
            Column.text("messageId", "MESSAGE_ID"),
            Column.text("priority", "PRIORITY"),
            Column.text("oob", "OOB"),
            Column.text("ackable", "ACKABLE"),
            Column.time("deliveredAt", "DELIVERED_AT"),
            Column.text("clientId", "CLIENT_ID"),
            Column.text("reason", "REASON"),
            Column.text("payload", "PAYLOAD"));

    @ParentCommand
    private RoomCommand group;

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "ROOM", description = "The room.")
    private String room;

    @Option(names = "--async", description = "Join as a listener: receive every released "
            + "message without gating the room, acking or being evicted.")
    private boolean async;

    @Option(names = "--count", paramLabel = "N", description = "Stop after N deliveries.")
    private Integer count;

    @Option(names = "--timeout", paramLabel = "D", converter = DurationConverter.class,
            description = "Stop after D without a delivery (500ms, 5s, 1m; default: never).")
    private Duration timeout;

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    private Settle settle;

    @Option(names = "--client-timeout", paramLabel = "D", converter = DurationConverter.class,
            description = "The session's heartbeat timeout: a SYNC member not heard from for D is "
                    + "evicted (at least 1s; default: the server's rooms.clientTimeout).")
    private Duration clientTimeout;

    /** --ack-delay D | --no-ack (default: ack at once). */
    static final class Settle {
        @Option(names = "--ack-delay", paramLabel = "D", converter = DurationConverter.class,
                description = "Wait D after printing a delivery before acking it.")
        Duration ackDelay;

        @Option(names = "--no-ack", description = "Never ack (a SYNC member then holds the room).")
        boolean noAck;
    }

    @Override
    public Integer call() throws Exception {
        RoomCommand.requireRoom(spec, room);
        if (count != null && count < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--count must be at least 1, got " + count);
        }
        if (timeout != null && timeout.isZero()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--timeout must be positive");
        }
        HourglassCommand root = group.root();
        RecordPrinter printer = root.printer(COLUMNS, spec.commandLine().getOut());
        ConsumeProgress progress = new ConsumeProgress(count == null ? 0 : count);
        Participant participant = new Participant(printer, progress);
        RoomSessionOptions options;
        try {
            options = RoomSessionOptions.of(participant).withClientTimeout(clientTimeout)
                    .withGiveUpAfter(root.deadline());
        } catch (IllegalArgumentException e) {
            throw RoomCommand.usage(spec, e);
        }
        try (HourglassClient client = root.openClient(b -> b)) {
            RoomSession session = client.rooms().openSession(options);
            participant.session = session;
            try {
                RoomReply reply = session.subscribe(room, async ? RoomMode.ASYNC : RoomMode.SYNC).get();
                if (!reply.ok()) {
                    throw new HourglassClientException("could not join room '" + room + "': " + reply.outcome());
                }
                session.terminated().whenComplete((v, e) -> progress.end(e));
                progress.await(timeout);
            } finally {
                participant.stopping.countDown();
                session.close();
                printer.flush();
            }
        }
        return ExitCodes.OK;
    }

    /**
     * The session's handler: prints, acks, and reports progress. Runs on the session's thread,
     * the only one that prints until the session is closed.
     */
    private final class Participant implements RoomHandler {
        final CountDownLatch stopping = new CountDownLatch(1);
        private final RecordPrinter printer;
        private final ConsumeProgress progress;
        volatile RoomSession session;

        Participant(RecordPrinter printer, ConsumeProgress progress) {
            this.printer = printer;
            this.progress = progress;
        }

        @Override
        public void onMessage(ReceivedRoomMessage m) {
            if (!progress.claim()) {
                return; // past --count: not acked; the room moves on when the session closes
            }
            try {
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("room", m.room());
                record.put("messageId", m.messageId());
                record.put("priority", m.priority());
                record.put("payload", m.payloadUtf8());
                record.put("oob", m.oob());
                record.put("ackable", m.ackable());
                record.put("deliveredAt", m.deliveredAtMs());
                print(record);
                if (m.ackable() && (settle == null || !settle.noAck)) {
                    if (settle != null && settle.ackDelay != null) {
                        // Cut short when the command stops: a printed delivery is always acked.
                        stopping.await(settle.ackDelay.toNanos(), TimeUnit.NANOSECONDS);
                    }
                    session.ack(m);
                }
                progress.handled();
            } catch (Exception e) {
                progress.end(e);
            }
        }

        @Override
        public void onEjected(RoomEjection ejection) {
            Map<String, Object> record = new LinkedHashMap<>();
            record.put("event", "ejected");
            record.put("room", ejection.room());
            record.put("reason", ejection.reason().name());
            print(record);
            if (ejection.room().equals(room) && ejection.reason() != RoomEjection.Reason.UNSUBSCRIBED) {
                progress.end(null);
            }
        }

        /** The first subscribe, or the session's own after a reconnect, was accepted. */
        @Override
        public void onSubscribed(String subscribed, String clientId, RoomReply reply) {
            if (reply.ok()) {
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("event", "joined");
                record.put("room", subscribed);
                record.put("clientId", clientId);
                print(record);
            }
        }

        private void print(Map<String, Object> record) {
            printer.print(record);
            printer.flush();
        }
    }
}
