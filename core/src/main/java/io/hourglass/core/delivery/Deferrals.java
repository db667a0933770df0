package io.hourglass.core.delivery;

import io.hourglass.core.storage.EventKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Delayed NACKs (DESIGN §9): a recipient that gave a message back with a delay is not offered it
 * again before then, and is offered it at that time. A durable group's deferral is also replicated
 * ({@code DeferCmd}, the {@code deferred} column family), so a new leader loads it and waits too; a
 * universal consumer's lives on this leader only (it has no durable state to survive a failover).
 * Loop only.
 */
final class Deferrals {
    /** Hands a message whose deferral ran out back to its recipient. */
    @FunctionalInterface
    interface Due {
        void redeliver(EventKey key, Recipient recipient, String topic);
    }

    private record Entry(EventKey key, Recipient recipient, String topic) {
    }

    private final Map<EventKey, Map<Recipient, Long>> until = new HashMap<>();
    private final TreeMap<Long, List<Entry>> timed = new TreeMap<>();

    /** {@code recipient} gets {@code key} again at {@code untilMs}, not before. */
    void defer(EventKey key, Recipient recipient, String topic, long untilMs) {
        until.computeIfAbsent(key, k -> new HashMap<>(2)).merge(recipient, untilMs, Math::max);
        timed.computeIfAbsent(untilMs, t -> new ArrayList<>(1)).add(new Entry(key, recipient, topic));
    }

    /** When {@code recipient} may have {@code key} again; 0 when it is not deferred. */
    long until(EventKey key, Recipient recipient) {
        Map<Recipient, Long> m = until.get(key);
        Long t = m == null ? null : m.get(recipient);
        return t == null ? 0 : t;
    }

    /** Hands every deferral that ran out by {@code nowMs} to {@code due}. O(deferrals ending). */
    void due(long nowMs, Due due) {
        for (Map.Entry<Long, List<Entry>> e = timed.firstEntry(); e != null && e.getKey() <= nowMs; e = timed.firstEntry()) {
            timed.pollFirstEntry();
            for (Entry d : e.getValue()) {
                Map<Recipient, Long> m = until.get(d.key());
                Long t = m == null ? null : m.get(d.recipient());
                if (t != null && t <= nowMs) { // a later deferral of the same pair has its own entry
                    m.remove(d.recipient());
                    if (m.isEmpty()) {
                        until.remove(d.key());
                    }
                    due.redeliver(d.key(), d.recipient(), d.topic());
                }
            }
        }
    }

    /** The earliest time a deferral runs out; MAX_VALUE when none. */
    long earliest() {
        return timed.isEmpty() ? Long.MAX_VALUE : timed.firstKey();
    }

    /** The message is gone (or acknowledged by everyone): nothing to wait for. */
    void forget(EventKey key) {
        until.remove(key); // its timed entries find nothing and are dropped when they come up
    }

    int size() {
        return until.size();
    }

    void clear() {
        until.clear();
        timed.clear();
    }
}
