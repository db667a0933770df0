package io.hourglass.chaos.run;

import static org.awaitility.Awaitility.await;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.ReceivedRoomMessage;
import io.hourglass.client.RoomEjection;
import io.hourglass.client.RoomHandler;
import io.hourglass.client.RoomMode;
import io.hourglass.client.RoomReply;
import io.hourglass.client.RoomSession;
import io.hourglass.client.RoomSessionOptions;
import io.hourglass.client.RoomStatus;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The lock-step side of a chaos run: an at-most-once room and an at-least-once room, each with
 * two SYNC members that ack every message right after receiving it and one ASYNC member; sends
 * with random priorities (0-3), half by the room's members (sync or async), half from outside, and
 * now and then out of band. Deliveries, acks,
 * ejections and (re)opened sessions go to the history as {@code room_*} events for the
 * checker's lock-step rule.
 */
final class RoomWorkload implements AutoCloseable {
    static final List<String> ROOMS = List.of("chaos-room", "chaos-room-alo");
    private static final Duration SEND_INTERVAL = Duration.ofMillis(150);

    private final HistoryRecorder history;
    private final Random random;
    private final HourglassClient client;
    private final List<RoomSession> sessions = new ArrayList<>();
    /** Each room's member sessions, which send too (a send counts as the member's heartbeat). */
    private final Map<String, List<RoomSession>> members = new java.util.HashMap<>();
    private final AtomicBoolean sending = new AtomicBoolean(true);
    final AtomicLong sent = new AtomicLong();
    final AtomicLong sendFailed = new AtomicLong();
    final AtomicLong delivered = new AtomicLong();
    private ScheduledExecutorService sender;

    /** @param clients a client builder for the given servers (the cluster's credentials) */
    RoomWorkload(HistoryRecorder history, List<String> servers, Random random,
                 java.util.function.Function<List<String>, HourglassClient.Builder> clients) {
        this.history = history;
        this.random = random;
        this.client = clients.apply(servers).build();
    }

    /** Configures the at-least-once room and subscribes every member; returns once all are subscribed. */
    void startMembers() {
        client.rooms().configure(ROOMS.get(1), true, Duration.ZERO);
        List<java.util.concurrent.CompletableFuture<RoomReply>> subscribed = new ArrayList<>();
        for (String room : ROOMS) {
            subscribed.add(member(room, room + "-sync1", RoomMode.SYNC));
            subscribed.add(member(room, room + "-sync2", RoomMode.SYNC));
            subscribed.add(member(room, room + "-async", RoomMode.ASYNC));
        }
        try {
            await("every room member subscribed").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                    .until(() -> subscribed.stream().allMatch(f -> f.isDone() && !f.isCompletedExceptionally()));
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("room members did not subscribe", e);
        }
    }

    private java.util.concurrent.CompletableFuture<RoomReply> member(String room, String name, RoomMode mode) {
        RoomSession[] self = new RoomSession[1];
        RoomHandler handler = new RoomHandler() {
            @Override
            public void onMessage(ReceivedRoomMessage m) {
                delivered.incrementAndGet();
                history.record("room_deliver", name, Map.of("room", m.room(), "member", name,
                        "messageId", m.messageId(), "sync", m.ackable(), "oob", m.oob(),
                        "redelivered", m.redelivered(), "priority", m.priority()));
                if (m.ackable()) {
                    history.record("room_ack", name, Map.of("room", m.room(), "member", name,
                            "messageId", m.messageId()));
                    self[0].ack(m);
                }
            }

            @Override
            public void onEjected(RoomEjection ejection) {
                history.record("room_evict", name, Map.of("room", ejection.room(), "member", name,
                        "reason", ejection.reason().name()));
            }

            @Override
            public void onOpened(String clientId) {
                history.record("room_open", name, Map.of("room", room, "member", name, "clientId", clientId));
            }
        };
        RoomSession session = client.rooms().openSession(RoomSessionOptions.of(handler)
                .withBackoff(Duration.ofMillis(50), Duration.ofMillis(500)));
        self[0] = session;
        sessions.add(session);
        members.computeIfAbsent(room, r -> new ArrayList<>()).add(session);
        return session.subscribe(room, mode);
    }

    void startSender() {
        sender = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "chaos-room-sender"));
        Random local = new Random(random.nextLong());
        sender.scheduleWithFixedDelay(() -> sendOne(local), 0, SEND_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void sendOne(Random local) {
        if (!sending.get()) {
            return;
        }
        String room = ROOMS.get(local.nextInt(ROOMS.size()));
        boolean oob = local.nextInt(10) == 0;
        int priority = local.nextInt(4);
        String payload = "room-" + sent.incrementAndGet();
        long start = System.currentTimeMillis();
        try {
            // Half the gated sends come from a member of the room (sync or async), half from outside.
            List<RoomSession> inRoom = members.get(room);
            int by = local.nextInt(2 * inRoom.size());
            String id = oob ? client.rooms().sendOutOfBand(room, payload).messageId()
                    : by < inRoom.size() ? inRoom.get(by).send(room, payload.getBytes(StandardCharsets.UTF_8), priority)
                    : client.rooms().send(room, payload, priority);
            history.record("room_send", "room-sender", Map.of("room", room, "messageId", id, "oob", oob,
                    "priority", priority, "start", start, "ok", true,
                    "by", !oob && by < inRoom.size() ? "member" + by : "outside"));
        } catch (RuntimeException e) {
            sendFailed.incrementAndGet();
            history.record("room_send", "room-sender", Map.of("room", room, "messageId", payload, "oob", oob,
                    "priority", priority, "start", start, "ok", false, "error", String.valueOf(e)));
        }
    }

    void stopSender() throws InterruptedException {
        sending.set(false);
        sender.shutdown();
        if (!sender.awaitTermination(2, TimeUnit.MINUTES)) {
            throw new AssertionError("room sender did not stop");
        }
    }

    /**
     * After the sender stopped: waits (bounded) until every room's backlog is delivered, then
     * records each room's final state as a {@code room_state} event; a backlog left over means
     * the room stalled, which the checker reports.
     */
    void drain(Duration timeout) {
        try {
            await("rooms drained").atMost(timeout).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                    .until(() -> ROOMS.stream().allMatch(r -> client.rooms().state(r).backlog() == 0));
        } catch (ConditionTimeoutException e) {
            System.out.println("rooms not drained after " + timeout);
        }
        for (String room : ROOMS) {
            try {
                RoomStatus st = client.rooms().state(room);
                System.out.println("room state: " + st);
                history.record("room_state", "runner", Map.of("room", room, "backlog", st.backlog(),
                        "inFlight", st.inFlight(), "members", st.members().size(),
                        "ready", st.members().stream().filter(RoomStatus.Member::ready).count()));
            } catch (RuntimeException e) {
                System.out.println("room state of " + room + " unavailable: " + e);
            }
        }
    }

    String summary() {
        return "room sends ok " + (sent.get() - sendFailed.get()) + ", failed " + sendFailed.get()
                + ", room deliveries " + delivered.get();
    }

    @Override
    public void close() {
        if (sender != null) {
            sender.shutdownNow();
        }
        sessions.forEach(RoomSession::close);
        client.close();
    }
}
