package io.hourglass.core.delivery;

import io.hourglass.core.storage.EventKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which message is out with which recipient (a group, or one universal consumer), since when,
 * and how many times it has been sent. Leader-local, never replicated: a new leader starts empty.
 *
 * <p>An entry blocks redispatch to its recipient while it is held and younger than the
 * in-flight timeout, and for good once acknowledged — until the replicated receipt or delete
 * clears it ({@link #clearRecipient}, {@link #clearMessage}). All methods lock this tracker.
 *
 * <p>Entries are also indexed by the consumer that owns them, so that a disconnect costs
 * O(that consumer's entries), not a scan of every message in flight: 2 000 streams closing at
 * once used to queue 2 000 transport threads on this monitor, each scanning the whole map.
 * Invariant: {@code key ∈ byOwner[c]} exactly when some recipient's entry for {@code key} has
 * owner {@code c}. An entry has an owner while it is held by a consumer, and for its whole life
 * when its recipient is a universal consumer (that recipient goes away with the consumer).
 */
final class InFlightTracker {
    private enum State { HELD, ACKED, RELEASED }

    /** @param owner the consumer this entry goes away or is released with, or null */
    private record Entry(State state, String owner, long sinceMs, int attempt) {
    }

    private final long timeoutMs;
    private final Map<EventKey, Map<String, Entry>> entries = new HashMap<>();
    private final Map<String, Set<EventKey>> byOwner = new HashMap<>();

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

    /**
     * Records a dispatch and returns its attempt number (1 the first time for this recipient), or 0
     * when the consumer was released already: the caller must then not hand it the message (a
     * dispatcher pass that read the route before the disconnect would otherwise leave the message
     * held by a stream that is gone, until the in-flight timeout).
     */
    synchronized int claim(EventKey key, String recipient, Consumer consumer, long nowMs) {
        if (consumer.releasedInFlight) {
            return 0;
        }
        Entry previous = entry(key, recipient);
        int attempt = previous == null ? 1 : previous.attempt + 1;
        put(key, recipient, new Entry(State.HELD, consumer.id(), nowMs, attempt));
        return attempt;
    }

    synchronized void markAcked(EventKey key, String recipient) {
        Entry e = entry(key, recipient);
        String owner = isUniversal(recipient) && e != null ? e.owner : null;
        put(key, recipient, new Entry(State.ACKED, owner, 0, e == null ? 1 : e.attempt));
    }

    /** NACK: redeliverable at once, the attempt count kept. */
    synchronized void release(EventKey key, String recipient) {
        Entry e = entry(key, recipient);
        if (e != null && e.state == State.HELD) {
            put(key, recipient, new Entry(State.RELEASED, isUniversal(recipient) ? e.owner : null, 0, e.attempt));
        }
    }

    /**
     * A consumer went away: what it held becomes redeliverable at once, and a universal
     * consumer's entries vanish with it; later claims for it are refused. Returns the keys it held
     * unacknowledged. Costs O(the consumer's own entries).
     */
    synchronized List<EventKey> releaseConsumer(Consumer consumer) {
        consumer.releasedInFlight = true;
        String consumerId = consumer.id();
        String recipient = consumer.recipient();
        Set<EventKey> owned = byOwner.remove(consumerId);
        if (owned == null) {
            return List.of();
        }
        List<EventKey> released = new ArrayList<>();
        boolean universal = isUniversal(recipient);
        for (EventKey key : owned) {
            Map<String, Entry> recipients = entries.get(key);
            Entry e = recipients == null ? null : recipients.get(recipient);
            if (e == null || !consumerId.equals(e.owner)) {
                continue;
            }
            if (e.state == State.HELD) {
                released.add(key);
            }
            if (universal) {
                recipients.remove(recipient);
                if (recipients.isEmpty()) {
                    entries.remove(key);
                }
            } else if (e.state == State.HELD) {
                recipients.put(recipient, new Entry(State.RELEASED, null, 0, e.attempt));
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
            if (isUniversal(r.getKey())) {
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
            unindex(key, recipients.remove(recipient));
            if (recipients.isEmpty()) {
                entries.remove(key);
            }
        }
    }

    synchronized void clearMessage(EventKey key) {
        Map<String, Entry> recipients = entries.remove(key);
        if (recipients != null) {
            recipients.values().forEach(e -> unindex(key, e));
        }
    }

    synchronized void clear() {
        entries.clear();
        byOwner.clear();
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

    /** Keys indexed under one consumer (tests: the index must not outgrow what it holds). */
    synchronized int indexedFor(String consumerId) {
        return byOwner.getOrDefault(consumerId, Set.of()).size();
    }

    private void put(EventKey key, String recipient, Entry next) {
        Entry old = entries.computeIfAbsent(key, k -> new HashMap<>()).put(recipient, next);
        if (old != null && old.owner != null && !old.owner.equals(next.owner)) {
            unindex(key, old);
        }
        if (next.owner != null) {
            byOwner.computeIfAbsent(next.owner, o -> new HashSet<>()).add(key);
        }
    }

    private void unindex(EventKey key, Entry e) {
        if (e == null || e.owner == null) {
            return;
        }
        Set<EventKey> owned = byOwner.get(e.owner);
        if (owned != null) {
            owned.remove(key);
            if (owned.isEmpty()) {
                byOwner.remove(e.owner);
            }
        }
    }

    private static boolean isUniversal(String recipient) {
        return recipient.startsWith("u:");
    }

    private Entry entry(EventKey key, String recipient) {
        Map<String, Entry> recipients = entries.get(key);
        return recipients == null ? null : recipients.get(recipient);
    }
}
