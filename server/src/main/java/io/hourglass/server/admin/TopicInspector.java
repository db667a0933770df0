package io.hourglass.server.admin;

import io.hourglass.api.v1.GroupInfo;
import io.hourglass.api.v1.PeekedMessage;
import io.hourglass.api.v1.TopicInfo;
import io.hourglass.core.delivery.Consumer;
import io.hourglass.core.delivery.DeliveryEngine;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Read-only figures about topics, computed from the store (replicated) and the delivery engine
 * (leader-local: in flight, consumers). Counts come from the store's counters and key indexes
 * ({@link io.hourglass.core.storage.TopicFigures}), never from reading a topic's messages; names cost
 * one message read per topic; a peek reads the page it returns.
 */
final class TopicInspector {
    private static final long EXPIRING_SOON_MS = 60_000;
    private static final long[] WITHIN_MS = {60_000, 3_600_000, 86_400_000};
    /** Pending messages per group by deliveries so far: 0, 1, 2, 3, 4 or more. */
    private static final int DELIVERY_BUCKETS = 5;

    private final EventStore store;
    private final DeliveryEngine engine;
    private final Clock clock;

    TopicInspector(EventStore store, DeliveryEngine engine, Clock clock) {
        this.store = store;
        this.engine = engine;
        this.clock = clock;
    }

    /** The names of the topics that have stored messages or durable groups and start with {@code prefix}, sorted. */
    Set<String> names(String prefix) {
        Set<String> topics = new TreeSet<>();
        store.topicRegistry().keySet().stream().filter(t -> t.startsWith(prefix)).forEach(topics::add);
        store.topicFigures().names(prefix, topics::add);
        return topics;
    }

    /** True when the topic has stored messages, durable groups or consumers. */
    boolean exists(String topic) {
        boolean[] any = {!store.durableGroups(topic).isEmpty() || consumers(topic) > 0};
        if (!any[0]) {
            store.queue().scanTopic(topic, (k, m) -> {
                any[0] = true;
                return false;
            });
        }
        return any[0];
    }

    /**
     * The topic's figures, from counters and key indexes ({@link io.hourglass.core.storage.TopicFigures}):
     * O(hours holding its messages + its receipts + messages expiring soon), not O(its messages).
     */
    TopicInfo stats(String topic) {
        long now = clock.millis();
        Set<String> groups = new TreeSet<>(store.durableGroups(topic));
        var figures = store.topicFigures();
        var due = figures.due(topic, now, WITHIN_MS);
        Map<String, Long> perGroup = new TreeMap<>();
        if (!groups.isEmpty()) {
            Map<String, Long> receipts = figures.receipts(topic);
            groups.forEach(g -> perGroup.put(g, Math.max(0, due.pending() - receipts.getOrDefault(g, 0L))));
        }
        return TopicInfo.newBuilder().setTopic(topic).setPending(due.pending()).setDueNow(due.dueNow())
                .setScheduled(due.pending() - due.dueNow()).setInFlight(engine.inFlightCount(topic)).addAllGroups(groups)
                .setConsumers(consumers(topic))
                .setOldestDueLatenessMs(due.dueNow() == 0 ? 0 : Math.max(0, now - due.firstDueAtMs()))
                .setExpiringSoon(due.pending() == 0 ? 0 : figures.expiringBy(topic, now + EXPIRING_SOON_MS))
                .putAllPendingPerGroup(perGroup)
                .setDueWithin1M(due.dueWithin()[0]).setDueWithin1H(due.dueWithin()[1]).setDueWithin1D(due.dueWithin()[2])
                .build();
    }

    List<GroupInfo> groups(String topic) {
        TopicInfo t = stats(topic);
        Map<String, Integer> live = new HashMap<>();
        for (Consumer c : engine.hub().consumers()) {
            if (c.topic().equals(topic) && !c.isUniversal()) {
                live.merge(c.group(), 1, Integer::sum);
            }
        }
        Map<String, long[]> byDeliveries = new HashMap<>();
        t.getGroupsList().forEach(g -> byDeliveries.put(g, new long[DELIVERY_BUCKETS]));
        // Only delivered messages have a count stored: read those, and the rest of the group's pending
        // were never delivered. O(stored counts of the topic), not O(its messages).
        store.topicFigures().deliveryCounts(topic, (key, g, n) -> {
            long[] counts = byDeliveries.get(g);
            if (counts != null && n > 0 && !store.queue().hasReceipt(key, g)) {
                counts[Math.min(DELIVERY_BUCKETS - 1, n)]++;
            }
            return true;
        });
        byDeliveries.forEach((g, counts) -> counts[0] = Math.max(0,
                t.getPendingPerGroupOrDefault(g, 0) - Arrays.stream(counts).sum()));
        List<GroupInfo> out = new ArrayList<>();
        for (String g : t.getGroupsList()) {
            GroupInfo.Builder info = GroupInfo.newBuilder().setGroup(g).setPending(t.getPendingPerGroupOrDefault(g, 0))
                    .setConsumers(live.getOrDefault(g, 0)).setInFlight(engine.inFlightCount(topic, g));
            Arrays.stream(byDeliveries.get(g)).forEach(info::addPendingByDeliveries);
            store.queue().groupPolicy(topic, g).ifPresent(p -> info.addAllBackoffMs(p.getBackoffMsList())
                    .setMaxDeliveries(p.getMaxDeliveries()).setDeadLetterTopic(p.getDeadLetterTopic()));
            out.add(info.build());
        }
        return out;
    }

    /**
     * Counts of {@code topic}'s stored messages per bucket of {@code bucketMs} in
     * [{@code fromMs}, {@code untilMs}), with those before and after the window: the keys inside the
     * window are read (O(its messages in the window), no message decoded), those before it counted
     * like the topic's due figures ({@link io.hourglass.core.storage.TopicFigures#due}), those after
     * it are the rest.
     */
    io.hourglass.api.v1.TopicScheduleResponse schedule(String topic, long fromMs, long untilMs, long bucketMs) {
        int n = (int) ((untilMs - fromMs + bucketMs - 1) / bucketMs);
        long[] counts = new long[n];
        long[] inside = {0};
        var figures = store.topicFigures();
        figures.dueTimes(topic, fromMs, untilMs, due -> {
            counts[(int) ((due - fromMs) / bucketMs)]++;
            inside[0]++;
            return true;
        });
        var before = figures.due(topic, fromMs - 1);
        long[] outside = {before.dueNow(), Math.max(0, before.pending() - before.dueNow() - inside[0])};
        var response = io.hourglass.api.v1.TopicScheduleResponse.newBuilder().setBefore(outside[0]).setAfter(outside[1]);
        for (int i = 0; i < n; i++) {
            long from = fromMs + i * bucketMs;
            response.addBuckets(io.hourglass.api.v1.DueBucket.newBuilder().setFromMs(from)
                    .setUntilMs(Math.min(untilMs, from + bucketMs)).setCount(counts[i]));
        }
        return response.build();
    }

    /** One page of {@link #peek}: the messages and the key to continue after, if there is more. */
    record PeekPage(List<PeekedMessage> messages, Optional<EventKey> continueAfter) {
    }

    /**
     * Up to {@code limit} stored messages of {@code topic} in key (due) order, after
     * {@code after} when given, and no more than {@code maxBytes} of them (serialized) — but at
     * least one, so a page always progresses. Messages before the page are skipped by a scan:
     * O(messages up to the page end), acceptable for an operator's query bounded by --limit.
     */
    PeekPage peek(String topic, int limit, Optional<EventKey> after, int maxBytes) {
        return peek(topic, limit, after, maxBytes, 0, Long.MAX_VALUE);
    }

    /**
     * {@link #peek} of the messages due in [{@code fromMs}, {@code untilMs}) only: the scan seeks to
     * the window's start and stops at its end, so it reads O(the page), not what lies before.
     */
    PeekPage peek(String topic, int limit, Optional<EventKey> after, int maxBytes, long fromMs, long untilMs) {
        List<PeekedMessage> out = new ArrayList<>();
        byte[] from = after.map(EventKey::toBytes).orElse(null);
        EventKey windowStart = new EventKey(EventKey.topicHash(topic), fromMs, 0);
        EventKey start = after.filter(a -> a.compareTo(windowStart) > 0).orElse(windowStart);
        long[] bytes = {0};
        EventKey[] last = {null};
        boolean[] more = {false};
        store.queue().scanTopicFrom(topic, start, (key, m) -> {
            if (key.dueAtMs() >= untilMs) {
                return false;
            }
            if (from != null && Arrays.compareUnsigned(key.toBytes(), from) <= 0) {
                return true;
            }
            PeekedMessage p = PeekedMessage.newBuilder().setId(key.toHex()).setPayload(m.getPayload())
                    .putAllHeaders(m.getHeadersMap()).setEnqueuedAtMs(m.getEnqueuedAtMs()).setDueAtMs(m.getDueAtMs())
                    .setExpiresAtMs(m.getExpiresAtMs()).build();
            int size = p.getSerializedSize() + 8;
            if (out.size() >= limit || (!out.isEmpty() && bytes[0] + size > maxBytes)) {
                more[0] = true;
                return false;
            }
            out.add(p);
            bytes[0] += size;
            last[0] = key;
            return true;
        });
        return new PeekPage(out, more[0] ? Optional.of(last[0]) : Optional.empty());
    }

    private int consumers(String topic) {
        int n = 0;
        for (Consumer c : engine.hub().consumers()) {
            if (c.topic().equals(topic)) {
                n++;
            }
        }
        return n;
    }
}
