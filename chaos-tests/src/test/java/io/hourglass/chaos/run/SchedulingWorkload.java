package io.hourglass.chaos.run;

import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.hourglass.client.AdminClient;
import io.hourglass.client.CancelResult;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.ReceivedMessage;
import io.hourglass.client.SubscribeOptions;
import io.hourglass.client.Subscription;
import io.hourglass.core.command.QueueApplier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The scheduling side of a chaos run (DESIGN §9), on a topic of its own at five operations a
 * second from one producer: publishes with one of a few schedule keys (each replacing the key's
 * pending message; delays 0.5-3 s, so that most are still pending when replaced or cancelled),
 * unkeyed publishes, cancels by id of a recent publish and cancels by key. Group {@value #ACKING}
 * ACKs (NACKing 5 %); group {@value #NACKING}, configured with max deliveries
 * {@value #MAX_DELIVERIES} and dead-letter topic {@value #DEAD_LETTER_TOPIC}, always NACKs; group
 * {@value #DEAD_LETTERS} consumes the dead-letter topic. Every call, its outcome and every delivery
 * (with the server's send time and the dead-letter headers) go to the history.
 */
final class SchedulingWorkload implements AutoCloseable {
    static final String TOPIC = "chaos-k";
    static final String DEAD_LETTER_TOPIC = "chaos-k-dlq";
    private static final String ACKING = "k-ack";
    private static final String NACKING = "k-nack";
    private static final String DEAD_LETTERS = "k-dlq";
    private static final int MAX_DELIVERIES = 2;
    private static final int KEYS = 6;
    private static final int RECENT_IDS = 8;
    private static final Duration OPERATION_INTERVAL = Duration.ofMillis(200);

    private final HistoryRecorder history;
    private final List<String> servers;
    private final Function<List<String>, HourglassClient.Builder> builders;
    private final Random random;
    private final List<HourglassClient> clients = new ArrayList<>();
    private final Map<Subscription, String> consumers = new LinkedHashMap<>();
    private StreamBreaks breaks;
    private final AtomicBoolean producing = new AtomicBoolean(true);
    private final AtomicLong sequence = new AtomicLong();
    private final AtomicLong lastDeliveryMs = new AtomicLong();
    /** Operation or outcome → count, for the summary. Producer thread writes, the runner reads at the end. */
    private final Map<String, AtomicLong> counts = new java.util.concurrent.ConcurrentHashMap<>();
    /** Ids of the latest ok publishes, the cancels' targets. Producer thread only. */
    private final List<String> recent = new ArrayList<>();
    private ScheduledExecutorService producer;

    SchedulingWorkload(HistoryRecorder history, List<String> servers, Random random,
                       Function<List<String>, HourglassClient.Builder> clients) {
        this.history = history;
        this.servers = servers;
        this.random = random;
        this.builders = clients;
    }

    private HourglassClient client() {
        HourglassClient c = builders.apply(servers).build();
        clients.add(c);
        return c;
    }

    private void count(String what) {
        counts.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
    }

    /** Configures the dead-letter group (committed before anything is published) and subscribes every consumer. */
    void startConsumers() {
        HourglassClient admin = client();
        admin.admin().configureGroup(TOPIC, NACKING, null, MAX_DELIVERIES, DEAD_LETTER_TOPIC);
        history.record("group_config", "runner", Map.of("topic", TOPIC, "group", NACKING,
                "maxDeliveries", MAX_DELIVERIES, "deadLetter", DEAD_LETTER_TOPIC));
        SubscribeOptions options = SubscribeOptions.DEFAULT.withBackoff(Duration.ofMillis(50), Duration.ofMillis(500));
        for (int c = 1; c <= 2; c++) {
            Random local = new Random(random.nextLong());
            subscribe(TOPIC, ACKING, TOPIC + "-" + ACKING + "-c" + c, options, () -> {
                synchronized (local) {
                    return local.nextInt(100) >= 5;
                }
            });
        }
        subscribe(TOPIC, NACKING, TOPIC + "-" + NACKING + "-c1", options, () -> false);
        subscribe(DEAD_LETTER_TOPIC, DEAD_LETTERS, DEAD_LETTER_TOPIC + "-" + DEAD_LETTERS + "-c1", options, () -> true);
        try {
            await("every scheduling consumer subscribed").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> consumers.keySet().stream().allMatch(Subscription::isSubscribed));
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("scheduling consumers did not subscribe", e);
        }
        consumers.forEach((s, name) -> history.record("subscribe", name,
                Map.of("topic", s.topic(), "group", s.group(), "consumer", name)));
    }

    /** @param acks whether to ACK the next delivery (else NACK it) */
    private void subscribe(String topic, String group, String name, SubscribeOptions options,
                           java.util.function.BooleanSupplier acks) {
        Subscription s = client().subscribe(topic, group, options, (m, ctx) -> {
            long now = System.currentTimeMillis();
            lastDeliveryMs.set(now);
            count("deliver " + topic);
            history.record("deliver", name, now, deliverFields(m, group, name));
            Map<String, String> settle = Map.of("id", m.id(), "group", group, "consumer", name);
            if (acks.getAsBoolean()) {
                history.record("ack", name, settle);
                ctx.ack();
            } else {
                history.record("nack", name, settle);
                ctx.nack();
            }
        });
        consumers.put(s, name);
        if (breaks == null) {
            breaks = new StreamBreaks(history);
        }
        breaks.watch(s, name);
    }

    private static Map<String, Object> deliverFields(ReceivedMessage m, String group, String consumer) {
        Map<String, Object> fields = new HashMap<>(Map.of("id", m.id(), "topic", m.topic(), "group", group,
                "consumer", consumer, "attempt", m.attempt(), "sentAt", m.deliveredAtMs(), "payload", m.payloadUtf8()));
        String original = m.headers().get(QueueApplier.DEAD_LETTER_ID);
        if (original != null) {
            fields.put("deadLetterId", original);
            fields.put("deadLetterTopic", m.headers().getOrDefault(QueueApplier.DEAD_LETTER_TOPIC, ""));
            fields.put("deadLetterGroup", m.headers().getOrDefault(QueueApplier.DEAD_LETTER_GROUP, ""));
        }
        return fields;
    }

    void startProducer() {
        producer = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "chaos-scheduling-producer"));
        Random local = new Random(random.nextLong());
        HourglassClient client = client();
        producer.scheduleWithFixedDelay(() -> operate(client, local), 0, OPERATION_INTERVAL.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private void operate(HourglassClient client, Random local) {
        if (!producing.get()) {
            return;
        }
        int roll = local.nextInt(100);
        String key = "key-" + local.nextInt(KEYS);
        if (roll < 45) {
            publish(client, key, 500 + local.nextInt(2_501));
        } else if (roll < 65) {
            publish(client, "", local.nextInt(3_001));
        } else if (roll < 85 && !recent.isEmpty()) {
            cancel(client, Map.of("topic", TOPIC, "id", recent.get(local.nextInt(recent.size()))));
        } else {
            cancel(client, Map.of("topic", TOPIC, "key", key));
        }
    }

    private void publish(HourglassClient client, String key, long delayMs) {
        String payload = "sched-" + sequence.incrementAndGet();
        Message.Builder message = Message.builder(TOPIC).payload(payload).delay(Duration.ofMillis(delayMs));
        if (!key.isEmpty()) {
            message.key(key);
        }
        long start = System.currentTimeMillis();
        Map<String, Object> fields = new HashMap<>(Map.of("topic", TOPIC, "key", key, "start", start,
                "delayMs", delayMs, "expiresAt", 0, "payload", payload));
        try {
            PublishResult result = client.publish(message.build());
            fields.putAll(Map.of("id", result.id(), "dueAt", result.dueAtMs(), "ok", true,
                    "replacedId", result.replacedId()));
            history.record("publish", "scheduler", fields);
            count(key.isEmpty() ? "publish" : result.replacedId().isEmpty() ? "publish keyed" : "publish keyed, replaced");
            recent.add(result.id());
            if (recent.size() > RECENT_IDS) {
                recent.remove(0);
            }
        } catch (RuntimeException e) {
            fields.putAll(Map.of("id", payload, "dueAt", 0, "ok", false, "error", String.valueOf(e)));
            history.record("publish", "scheduler", fields);
            count("publish failed");
        }
    }

    /** @param target topic and either id or key */
    private void cancel(HourglassClient client, Map<String, String> target) {
        long start = System.currentTimeMillis();
        Map<String, Object> fields = new HashMap<>(target);
        fields.put("start", start);
        String how = target.containsKey("key") ? "cancel by key " : "cancel by id ";
        try {
            CancelResult result = target.containsKey("key") ? client.cancelKey(TOPIC, target.get("key"))
                    : client.cancel(TOPIC, target.get("id"));
            fields.putAll(Map.of("ok", true, "outcome", result.name()));
            count(how + result.name());
        } catch (RuntimeException e) {
            boolean notFound = AdminClient.statusCode(e) == Status.Code.NOT_FOUND;
            fields.putAll(notFound ? Map.of("ok", true, "outcome", "NOT_FOUND")
                    : Map.of("ok", false, "error", String.valueOf(e)));
            count(how + (notFound ? "NOT_FOUND" : "failed"));
        }
        history.record("cancel", "scheduler", fields);
    }

    void stopProducer() throws InterruptedException {
        producing.set(false);
        if (producer != null) {
            producer.shutdown();
            if (!producer.awaitTermination(2, TimeUnit.MINUTES)) {
                throw new AssertionError("scheduling producer did not stop");
            }
        }
    }

    /**
     * Waits (bounded) until both topics hold nothing (every message acked by its acking group and
     * moved out of the NACKing one, every copy acked) and deliveries stopped for a second.
     */
    void drain(Duration timeout) {
        HourglassClient admin = clients.get(0);
        try {
            await("scheduling topics drained").atMost(timeout).pollInterval(Duration.ofMillis(250))
                    .until(() -> stored(admin, TOPIC) == 0 && stored(admin, DEAD_LETTER_TOPIC) == 0
                            && System.currentTimeMillis() - lastDeliveryMs.get() > 1_000);
        } catch (ConditionTimeoutException e) {
            System.out.println("scheduling drain incomplete after " + timeout + ": " + stored(admin, TOPIC) + " in "
                    + TOPIC + ", " + stored(admin, DEAD_LETTER_TOPIC) + " in " + DEAD_LETTER_TOPIC
                    + "; the checker will name what is missing");
        }
    }

    private static long stored(HourglassClient admin, String topic) {
        try {
            return admin.admin().topicStats(topic).getPending();
        } catch (RuntimeException e) {
            return AdminClient.statusCode(e) == Status.Code.NOT_FOUND ? 0 : -1; // no such topic: nothing stored
        }
    }

    void stopConsumers() {
        consumers.forEach((s, name) -> {
            breaks.forget(s);
            s.close();
            history.record("disconnect", name, Map.of("consumer", name));
        });
        consumers.clear();
    }

    String summary() {
        return "scheduling " + new java.util.TreeMap<>(counts);
    }

    @Override
    public void close() {
        if (breaks != null) {
            breaks.close();
        }
        if (producer != null) {
            producer.shutdownNow();
        }
        consumers.keySet().forEach(Subscription::close);
        clients.forEach(HourglassClient::close);
    }
}
