package io.hourglass.core.delivery;

import io.hourglass.core.storage.EventKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Which message is out with which recipient (a group, or one universal consumer), since when,
 * and how many times it has been sent. Leader-local, never replicated: a new leader starts empty.
 *
 * <p>An entry blocks redispatch to its recipient while it is held and younger than the
 * in-flight timeout, and for good once acknowledged — until the replicated receipt or delete
 * clears it ({@link #clearRecipient}, {@link #clearMessage}). All methods lock this tracker.
 */
final class InFlightTracker {
    private enum State { HELD, ACKED, RELEASED }

    private record Entry(State state, String consumerId, long sinceMs, int attempt) {
    }

    private final long timeoutMs;
    private final Map<EventKey, Map<String, Entry>> entries = new HashMap<>();

    InFlightTracker(long timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    synchronized boolean isBlocked(EventKey key, String recipient, long nowMs) {
        Entry e = entry(key, recipient);
        if (e == null) {
            return false;
        }
        return switch (e.state) {
            case ACKED -> true;
            case HELD -> nowMs < e.sinceMs + timeoutMs;
            case RELEASED -> false;
        };
    }

    /** Records a dispatch and returns its attempt number (1 the first time for this recipient). */
    synchronized int claim(EventKey key, String recipient, String consumerId, long nowMs) {
        Entry previous = entry(key, recipient);
        int attempt = previous == null ? 1 : previous.attempt + 1;
        entries.computeIfAbsent(key, k -> new HashMap<>()).put(recipient, new Entry(State.HELD, consumerId, nowMs, attempt));
        return attempt;
    }

    synchronized void markAcked(EventKey key, String recipient) {
        Entry e = entry(key, recipient);
        entries.computeIfAbsent(key, k -> new HashMap<>())
                .put(recipient, new Entry(State.ACKED, null, 0, e == null ? 1 : e.attempt));
    }

    /** NACK: redeliverable at once, the attempt count kept. */
    synchronized void release(EventKey key, String recipient) {
        Entry e = entry(key, recipient);
        if (e != null && e.state == State.HELD) {
            entries.get(key).put(recipient, new Entry(State.RELEASED, null, 0, e.attempt));
        }
    }

    /**
     * A consumer went away: what it held becomes redeliverable at once, and a universal
     * consumer's entries vanish with it. Returns the keys it held unacknowledged.
     */
    synchronized List<EventKey> releaseConsumer(String consumerId, String universalRecipient) {
        List<EventKey> released = new ArrayList<>();
        for (Iterator<Map.Entry<EventKey, Map<String, Entry>>> it = entries.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<EventKey, Map<String, Entry>> byKey = it.next();
            Map<String, Entry> recipients = byKey.getValue();
            Entry own = universalRecipient == null ? null : recipients.remove(universalRecipient);
            if (own != null && own.state == State.HELD) {
                released.add(byKey.getKey());
            }
            for (Map.Entry<String, Entry> r : recipients.entrySet()) {
                Entry e = r.getValue();
                if (e.state == State.HELD && consumerId.equals(e.consumerId)) {
                    r.setValue(new Entry(State.RELEASED, null, 0, e.attempt));
                    released.add(byKey.getKey());
                }
            }
            if (recipients.isEmpty()) {
                it.remove();
            }
        }
        return released;
    }

    /** True when the message went to universal consumers and every one still tracked has acked it. */
    synchronized boolean universalSettled(EventKey key) {
        Map<String, Entry> recipients = entries.get(key);
        if (recipients == null) {
            return false;
        }
        boolean any = false;
        for (Map.Entry<String, Entry> r : recipients.entrySet()) {
            if (r.getKey().startsWith("u:")) {
                if (r.getValue().state != State.ACKED) {
                    return false;
                }
                any = true;
            }
        }
        return any;
    }

    synchronized void clearRecipient(EventKey key, String recipient) {
        Map<String, Entry> recipients = entries.get(key);
        if (recipients != null) {
            recipients.remove(recipient);
            if (recipients.isEmpty()) {
                entries.remove(key);
            }
        }
    }

    synchronized void clearMessage(EventKey key) {
        entries.remove(key);
    }

    synchronized void clear() {
        entries.clear();
    }

    /** Deliveries of one topic held by a consumer and not yet acknowledged. */
    synchronized int held(long topicHash) {
        int n = 0;
        for (Map.Entry<EventKey, Map<String, Entry>> e : entries.entrySet()) {
            if (e.getKey().topicHash() == topicHash) {
                for (Entry x : e.getValue().values()) {
                    if (x.state == State.HELD) {
                        n++;
                    }
                }
            }
        }
        return n;
    }

    /** Deliveries currently held by a consumer and not yet acknowledged. */
    synchronized int held() {
        int n = 0;
        for (Map<String, Entry> recipients : entries.values()) {
            for (Entry e : recipients.values()) {
                if (e.state == State.HELD) {
                    n++;
                }
            }
        }
        return n;
    }

    private Entry entry(EventKey key, String recipient) {
        Map<String, Entry> recipients = entries.get(key);
        return recipients == null ? null : recipients.get(recipient);
    }
}
