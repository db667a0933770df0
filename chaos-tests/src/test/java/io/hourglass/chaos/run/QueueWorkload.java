package io.hourglass.chaos.run;

import static org.awaitility.Awaitility.await;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.SubscribeOptions;
import io.hourglass.client.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.core.ConditionTimeoutException;

/**
 * The scheduled-queue side of a chaos run: two producers publishing unique payloads with random
 * delays (0-3 s, a quarter immediate) and some TTLs to two topics; per topic two durable groups of
 * two consumers and one universal consumer, which NACK 5 %, leave 3 % unsettled (slow consumers:
 * the in-flight timeout redelivers), confirm 22 % of their ACKs and ACK the rest
 * plainly. Every call and delivery goes to the history.
 */
final class QueueWorkload implements AutoCloseable {
    static final List<String> TOPICS = List.of("chaos-a", "chaos-b");
    private static final List<String> GROUPS = List.of("g1", "g2");
    private static final int CONSUMERS_PER_GROUP = 2;
    private static final int MAX_DELAY_MS = 3_000;
    private static final Duration PUBLISH_INTERVAL = Duration.ofMillis(50);

    private final HistoryRecorder history;
    private final List<String> servers;
    private final java.util.function.Function<List<String>, HourglassClient.Builder> builders;
    private final Random random;
    private final List<HourglassClient> clients = new ArrayList<>();
    private final AtomicLong sequence = new AtomicLong();
    final AtomicLong publishedOk = new AtomicLong();
    final AtomicLong publishFailed = new AtomicLong();
    final AtomicLong deliveries = new AtomicLong();
    private final AtomicLong lastDeliveryMs = new AtomicLong();
    private final AtomicBoolean producing = new AtomicBoolean(true);
    /** ok publishes without TTL: id → topic. */
    private final Map<String, String> expected = new ConcurrentHashMap<>();
    /** receiver (group, or "*consumer") + "\0" + id for every delivery. */
    private final Set<String> received = ConcurrentHashMap.newKeySet();
    private final Map<String, List<String>> receiversByTopic = new LinkedHashMap<>();
    private final Map<Subscription, String> consumers = new LinkedHashMap<>();
    private StreamBreaks breaks;
    private ScheduledExecutorService producers;

    /** @param clients a client builder for the given servers (the cluster's credentials) */
    QueueWorkload(HistoryRecorder history, List<String> servers, Random random,
                  java.util.function.Function<List<String>, HourglassClient.Builder> clients) {
        this.builders = clients;
        this.history = history;
        this.servers = servers;
        this.random = random;
    }

    private HourglassClient client() {
        HourglassClient c = builders.apply(servers).build();
        clients.add(c);
        return c;
    }

    void startConsumers() {
        SubscribeOptions options = SubscribeOptions.DEFAULT.withBackoff(Duration.ofMillis(50), Duration.ofMillis(500));
        for (String topic : TOPICS) {
            List<String> receivers = new ArrayList<>();
            for (String group : GROUPS) {
                receivers.add(group);
                for (int c = 1; c <= CONSUMERS_PER_GROUP; c++) {
                    subscribe(topic, group, topic + "-" + group + "-c" + c, options);
                }
            }
            String universal = topic + "-u";
            receivers.add("*" + universal);
            subscribe(topic, "", universal, options);
            receiversByTopic.put(topic, receivers);
        }
        try {
            await("every consumer subscribed").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                    .until(() -> consumers.keySet().stream().allMatch(Subscription::isSubscribed));
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("consumers did not subscribe", e);
        }
        // Declared once connected: a universal consumer receives only what is pending while it is connected.
        consumers.forEach((s, name) -> history.record("subscribe", name,
                Map.of("topic", s.topic(), "group", s.group(), "consumer", name)));
    }

    private void subscribe(String topic, String group, String name, SubscribeOptions options) {
        Random local = new Random(random.nextLong());
        Subscription s = client().subscribe(topic, group, options, (m, ctx) -> {
            long now = System.currentTimeMillis();
            deliveries.incrementAndGet();
            lastDeliveryMs.set(now);
            received.add((group.isEmpty() ? "*" + name : group) + "\u0000" + m.id());
            history.record("deliver", name, now, Map.of("id", m.id(), "topic", topic, "group", group,
                    "consumer", name, "attempt", m.attempt(), "sentAt", m.deliveredAtMs(), "payload", m.payloadUtf8()));
            int roll;
            synchronized (local) {
                roll = local.nextInt(100);
            }
            Map<String, String> settle = Map.of("id", m.id(), "group", group, "consumer", name);
            if (roll < 5) {
                history.record("nack", name, settle);
                ctx.nack();
            } else if (roll < 8) {
                // A slow consumer: it never settles, so the in-flight timeout redelivers the message.
                history.record("slow", name, settle);
            } else if (roll < 30) {
                history.record("ack", name, settle);
                ctx.ackConfirmed().whenComplete((v, e) -> {
                    if (e == null) {
                        history.record("confirm", name, settle);
                    }
                });
            } else {
                history.record("ack", name, settle);
                ctx.ack();
            }
        });
        consumers.put(s, name);
        if (breaks == null) {
            breaks = new StreamBreaks(history);
        }
        breaks.watch(s, name);
    }

    void startProducers() {
        producers = Executors.newScheduledThreadPool(2, r -> new Thread(r, "chaos-producer"));
        for (int p = 1; p <= 2; p++) {
            String producer = "producer-" + p;
            Random local = new Random(random.nextLong());
            HourglassClient client = client();
            producers.scheduleWithFixedDelay(() -> publishOne(producer, client, local),
                    0, PUBLISH_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void publishOne(String producer, HourglassClient client, Random local) {
        if (!producing.get()) {
            return;
        }
        String payload = producer + "-" + sequence.incrementAndGet();
        String topic = TOPICS.get(local.nextInt(TOPICS.size()));
        long delayMs = local.nextInt(4) == 0 ? 0 : local.nextInt(MAX_DELAY_MS + 1);
        long ttlMs = local.nextInt(10) == 0 ? 1_000 + local.nextInt(4_000) : 0;
        Message message = Message.builder(topic).payload(payload).delay(Duration.ofMillis(delayMs))
                .ttl(Duration.ofMillis(ttlMs)).build();
        long start = System.currentTimeMillis();
        try {
            PublishResult result = client.publish(message);
            long expiresAt = ttlMs > 0 ? result.dueAtMs() + ttlMs : 0;
            history.record("publish", producer, Map.of("id", result.id(), "topic", topic, "start", start,
                    "delayMs", delayMs, "dueAt", result.dueAtMs(), "expiresAt", expiresAt, "ok", true,
                    "payload", payload));
            publishedOk.incrementAndGet();
            if (ttlMs == 0) {
                expected.put(result.id(), topic);
            }
        } catch (RuntimeException e) {
            publishFailed.incrementAndGet();
            // The id is unknown: the payload names the indeterminate publish.
            history.record("publish", producer, Map.of("id", payload, "topic", topic, "start", start,
                    "delayMs", delayMs, "dueAt", 0, "expiresAt", 0, "ok", false, "payload", payload,
                    "error", String.valueOf(e)));
        }
    }

    void stopProducers() throws InterruptedException {
        producing.set(false);
        producers.shutdown();
        if (!producers.awaitTermination(2, TimeUnit.MINUTES)) {
            throw new AssertionError("producers did not stop");
        }
    }

    /** Waits (bounded) until every ok publish without TTL reached every durable group of its topic. */
    void drain(Duration timeout) {
        try {
            await("consumers drained").atMost(timeout).pollInterval(Duration.ofMillis(250))
                    .until(() -> missing() == 0 && System.currentTimeMillis() - lastDeliveryMs.get() > 1_000);
        } catch (ConditionTimeoutException e) {
            System.out.println("drain incomplete after " + timeout + ": " + missing()
                    + " (message, receiver) pairs missing; the checker will name them");
        }
    }

    /**
     * (message, durable group) pairs not received yet. Universal consumers are left out: one receives
     * only what is pending while it is connected, so after a fault it may rightly never get some
     * messages (the checker does not ask for them either), and counting them made every run wait
     * out the whole drain timeout.
     */
    private long missing() {
        long count = 0;
        for (Map.Entry<String, String> e : expected.entrySet()) {
            for (String receiver : receiversByTopic.get(e.getValue())) {
                if (!receiver.startsWith("*") && !received.contains(receiver + "\u0000" + e.getKey())) {
                    count++;
                }
            }
        }
        return count;
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
        return "published ok " + publishedOk.get() + ", publish failures " + publishFailed.get()
                + ", deliveries " + deliveries.get();
    }

    @Override
    public void close() {
        if (breaks != null) {
            breaks.close();
        }
        if (producers != null) {
            producers.shutdownNow();
        }
        consumers.keySet().forEach(Subscription::close);
        clients.forEach(HourglassClient::close);
    }
}
