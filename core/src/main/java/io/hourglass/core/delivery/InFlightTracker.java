package io.hourglass.core.delivery;

import io.hourglass.core.storage.EventKey;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which message is out with which {@link Recipient}, since when, and how many times it has been
 * sent. Leader-local, never replicated: a new leader starts empty.
 *
 * <p>An entry blocks redispatch to its recipient while it is held and younger than the in-flight
 * timeout, and for good once acknowledged — until the replicated receipt or delete clears it
 * ({@link #clearRecipient}, {@link #clearMessage}).
 *
 * <p>Owned by the delivery loop: every method runs on that one thread, so nothing here locks; only
 * the held counters are published for readers on other threads (metrics, admin).
 *
 * <p>Entries are indexed by the consumer that owns them, so that a disconnect costs O(that
 * consumer's entries). Invariant: {@code key ∈ byOwner[c]} exactly when some recipient's entry for
 * {@code key} has owner {@code c}. An entry has an owner while it is held by a consumer, and for its
 * whole life when its recipient is a universal consumer (that recipient goes away with the consumer).
 * Claims are also queued in claim order with their deadline, so that timed-out deliveries are found
 * in O(timed out) ({@link #expire}) rather than by a scan.
 */
final class InFlightTracker {
    private enum State { HELD, ACKED, RELEASED }

    /**
     * @param owner the consumer this entry goes away or is released with, or null
     * @param reason why the last delivery came back (nack, timeout, disconnect), or null
     */
    private record Entry(State state, String owner, long sinceMs, int attempt, String reason) {
        Entry(State state, String owner, long sinceMs, int attempt) {
            this(state, owner, sinceMs, attempt, null);
        }
    }

    /** Why a delivery came back, as a dead-lettered copy names it. */
    static final String NACKED = "nack";
    static final String TIMED_OUT = "timeout";
    static final String DISCONNECTED = "disconnect";

    /** A durable group's delivery of one message whose count is still to be replicated. */
    private record Counted(EventKey key, Recipient.Group group) {
    }

    /** A claim and when it times out; stale once its entry moved on. */
    private record Deadline(long atMs, EventKey key, Recipient recipient, String topic, int attempt) {
    }

    /** Receives a delivery whose in-flight timeout passed. */
    @FunctionalInterface
    interface TimedOut {
        void accept(EventKey key, Recipient recipient, String topic);
    }

    private final long timeoutMs;
    private final Map<EventKey, Map<Recipient, Entry>> entries = new HashMap<>();
    private final Map<String, Set<EventKey>> byOwner = new HashMap<>();
    private final ArrayDeque<Deadline> deadlines = new ArrayDeque<>();
    /** Delivery counts a previous leader replicated, for messages this leader has not sent yet. */
    private final Map<EventKey, Map<Recipient, Integer>> prior = new HashMap<>();
    /** Group deliveries made since the counts were last taken ({@link #takeCounts}). */
    private final Set<Counted> uncounted = new java.util.LinkedHashSet<>();
    /** Consumers that held a message before it timed out and went to another; their tags go with it. */
    private final Map<EventKey, List<String>> formerOwners = new HashMap<>();
    /** Held (unacknowledged) deliveries per topic hash; written by the loop, read by anyone. */
    private final Map<Long, Integer> heldByTopic = new ConcurrentHashMap<>();
    /** Held deliveries per (topic hash, group) of durable groups, read by any thread. */
    private final Map<GroupOf, Integer> heldByGroup = new ConcurrentHashMap<>();

    private record GroupOf(long topicHash, String group) {
    }
    private volatile int held;

    InFlightTracker(long timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    /** Whether this leader has handed the message to anyone, whatever became of that delivery since. */
    boolean touched(EventKey key) {
        return entries.containsKey(key) || formerOwners.containsKey(key);
    }

    boolean isBlocked(EventKey key, Recipient recipient, long nowMs) {
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
     * when the consumer was released already: the caller must then not hand it the message.
     */
    int claim(EventKey key, Recipient recipient, Consumer consumer, long nowMs) {
        if (consumer.releasedInFlight) {
            return 0;
        }
        Entry previous = entry(key, recipient);
        int attempt = nextAttempt(key, recipient);
        if (previous == null) {
            forgetPrior(key, recipient);
        }
        if (recipient instanceof Recipient.Group g) {
            uncounted.add(new Counted(key, g));
        }
        if (previous != null && previous.owner != null && !previous.owner.equals(consumer.id())) {
            formerOwners.computeIfAbsent(key, k -> new ArrayList<>(2)).add(previous.owner);
        }
        put(key, recipient, new Entry(State.HELD, consumer.id(), nowMs, attempt));
        deadlines.add(new Deadline(nowMs + timeoutMs, key, recipient, consumer.topic(), attempt));
        return attempt;
    }

    /** The attempt number the next delivery of {@code key} to {@code recipient} would carry. */
    int nextAttempt(EventKey key, Recipient recipient) {
        Entry e = entry(key, recipient);
        if (e != null) {
            return e.attempt + 1;
        }
        Map<Recipient, Integer> p = prior.get(key);
        Integer n = p == null ? null : p.get(recipient);
        return n == null ? 1 : n + 1;
    }

    /** The attempt number of the last delivery to {@code recipient} (0: none by this leader). */
    int attempt(EventKey key, Recipient recipient) {
        Entry e = entry(key, recipient);
        return e == null ? 0 : e.attempt;
    }

    /** Why the last delivery to {@code recipient} came back (nack, timeout, disconnect); "" when not known. */
    String reason(EventKey key, Recipient recipient) {
        Entry e = entry(key, recipient);
        return e == null || e.reason == null ? "" : e.reason;
    }

    /** A count a previous leader replicated: the next delivery to {@code recipient} is attempt {@code deliveries + 1}. */
    void prior(EventKey key, Recipient recipient, int deliveries) {
        if (entry(key, recipient) == null) {
            prior.computeIfAbsent(key, k -> new HashMap<>(2)).merge(recipient, deliveries, Math::max);
        }
    }

    private void forgetPrior(EventKey key, Recipient recipient) {
        Map<Recipient, Integer> p = prior.get(key);
        if (p != null && p.remove(recipient) != null && p.isEmpty()) {
            prior.remove(key);
        }
    }

    /**
     * The delivery counts to replicate now: each group delivery made since the last call, and no
     * later than {@code madeByMs}, whose message the group has not acknowledged. Younger ones wait
     * for a later call, so a message acknowledged within that age (nearly all of them) never costs
     * a count in the log. Forgets what it returns; {@link #recount} puts back those whose
     * replication failed. Stops at the first young delivery (the set is in claim order).
     */
    java.util.List<io.hourglass.core.command.QueueCommands.Count> takeCounts(long madeByMs) {
        if (uncounted.isEmpty()) {
            return List.of();
        }
        List<io.hourglass.core.command.QueueCommands.Count> out = new ArrayList<>();
        for (java.util.Iterator<Counted> it = uncounted.iterator(); it.hasNext(); ) {
            Counted c = it.next();
            Entry e = entry(c.key(), c.group());
            if (e != null && e.state == State.HELD && e.sinceMs > madeByMs) {
                break;
            }
            it.remove();
            if (e != null && e.state != State.ACKED && e.attempt > 0) {
                out.add(new io.hourglass.core.command.QueueCommands.Count(c.key(), c.group().name(), e.attempt));
            }
        }
        return out;
    }

    /** Counts whose batch failed: taken again by the next {@link #takeCounts}. */
    void recount(List<io.hourglass.core.command.QueueCommands.Count> counts) {
        for (io.hourglass.core.command.QueueCommands.Count c : counts) {
            uncounted.add(new Counted(c.key(), new Recipient.Group(c.group())));
        }
    }

    void markAcked(EventKey key, Recipient recipient) {
        Entry e = entry(key, recipient);
        String owner = recipient.isUniversal() && e != null ? e.owner : null;
        put(key, recipient, new Entry(State.ACKED, owner, 0, e == null ? 1 : e.attempt));
    }

    /** NACK: redeliverable at once, the attempt count kept. Returns whether it was held. */
    boolean release(EventKey key, Recipient recipient) {
        Entry e = entry(key, recipient);
        if (e != null && e.state == State.HELD) {
            put(key, recipient, new Entry(State.RELEASED, recipient.isUniversal() ? e.owner : null, 0, e.attempt, NACKED));
            return true;
        }
        return false;
    }

    /**
     * Hands every delivery whose in-flight timeout passed by {@code nowMs} and that is still held to
     * {@code timedOut}; it stays held (and blocked for nobody) until redelivered. O(claims timed out).
     */
    void expire(long nowMs, TimedOut timedOut) {
        for (Deadline d = deadlines.peek(); d != null && d.atMs <= nowMs; d = deadlines.peek()) {
            deadlines.poll();
            Entry e = entry(d.key, d.recipient);
            if (e != null && e.state == State.HELD && e.attempt == d.attempt) {
                put(d.key, d.recipient, new Entry(State.HELD, e.owner, e.sinceMs, e.attempt, TIMED_OUT));
                timedOut.accept(d.key, d.recipient, d.topic);
            }
        }
    }

    /**
     * A consumer went away: what it held becomes redeliverable at once, and a universal
     * consumer's entries vanish with it; later claims for it are refused. Returns the keys it held
     * unacknowledged. Costs O(the consumer's own entries).
     */
    List<EventKey> releaseConsumer(Consumer consumer) {
        return releaseConsumer(consumer, Set.of());
    }

    /**
     * As {@link #releaseConsumer(Consumer)}, where {@code unsent} are deliveries that never left the
     * consumer's buffer for its stream: their claim is undone, so the next delivery carries the
     * attempt number they would have had and a group's max deliveries is not spent on them. A
     * consumer that stopped after a few messages held a full buffer of them (1 024), and each came back
     * as a second attempt — a third after another such stop — though no client ever saw it.
     */
    List<EventKey> releaseConsumer(Consumer consumer, Set<EventKey> unsent) {
        consumer.releasedInFlight = true;
        String consumerId = consumer.id();
        Recipient recipient = consumer.recipient();
        Set<EventKey> owned = byOwner.remove(consumerId);
        if (owned == null) {
            return List.of();
        }
        List<EventKey> released = new ArrayList<>();
        boolean universal = recipient.isUniversal();
        for (EventKey key : owned) {
            Map<Recipient, Entry> recipients = entries.get(key);
            Entry e = recipients == null ? null : recipients.get(recipient);
            if (e == null || !consumerId.equals(e.owner)) {
                continue;
            }
            if (e.state == State.HELD) {
                released.add(key);
                countHeld(key, recipient, -1);
            }
            if (universal) {
                recipients.remove(recipient);
                if (recipients.isEmpty()) {
                    entries.remove(key);
                }
            } else if (e.state == State.HELD) {
                int attempt = unsent.contains(key) ? e.attempt - 1 : e.attempt;
                recipients.put(recipient, new Entry(State.RELEASED, null, 0, attempt, DISCONNECTED));
            }
        }
        return released;
    }

    /** True when the message went to universal consumers and every one still tracked has acked it. */
    boolean universalSettled(EventKey key) {
        Map<Recipient, Entry> recipients = entries.get(key);
        if (recipients == null) {
            return false;
        }
        boolean any = false;
        for (Map.Entry<Recipient, Entry> r : recipients.entrySet()) {
            if (r.getKey().isUniversal()) {
                if (r.getValue().state != State.ACKED) {
                    return false;
                }
                any = true;
            }
        }
        return any;
    }

    /** The consumer holding {@code key} for {@code recipient}, if one does (its id). */
    String owner(EventKey key, Recipient recipient) {
        Entry e = entry(key, recipient);
        return e == null ? null : e.owner;
    }

    void clearRecipient(EventKey key, Recipient recipient) {
        forgetPrior(key, recipient);
        Map<Recipient, Entry> recipients = entries.get(key);
        if (recipients != null) {
            Entry e = recipients.remove(recipient);
            forget(key, recipient, e);
            if (recipients.isEmpty()) {
                entries.remove(key);
            }
        }
    }

    /** The message is gone; returns the ids of consumers that held or owned it (to forget its tag). */
    List<String> clearMessage(EventKey key) {
        prior.remove(key);
        Map<Recipient, Entry> recipients = entries.remove(key);
        List<String> former = formerOwners.remove(key);
        if (recipients == null) {
            return former == null ? List.of() : former;
        }
        List<String> owners = former == null ? new ArrayList<>(recipients.size()) : former;
        for (Map.Entry<Recipient, Entry> r : recipients.entrySet()) {
            Entry e = r.getValue();
            if (e.owner != null) {
                owners.add(e.owner);
            }
            forget(key, r.getKey(), e);
        }
        return owners;
    }

    void clear() {
        entries.clear();
        byOwner.clear();
        deadlines.clear();
        formerOwners.clear();
        prior.clear();
        uncounted.clear();
        heldByTopic.clear();
        heldByGroup.clear();
        held = 0;
    }

    /** Deliveries of one topic held by a consumer and not yet acknowledged (any thread). */
    int held(long topicHash) {
        return heldByTopic.getOrDefault(topicHash, 0);
    }

    /** Deliveries to durable group {@code group} of a topic held and not yet acknowledged (any thread). */
    int held(long topicHash, String group) {
        return heldByGroup.getOrDefault(new GroupOf(topicHash, group), 0);
    }

    /** Deliveries currently held by a consumer and not yet acknowledged (any thread). */
    int held() {
        return held;
    }

    /** Keys indexed under one consumer (tests: the index must not outgrow what it holds). */
    int indexedFor(String consumerId) {
        return byOwner.getOrDefault(consumerId, Set.of()).size();
    }

    private void put(EventKey key, Recipient recipient, Entry next) {
        Entry old = entries.computeIfAbsent(key, k -> new HashMap<>(4)).put(recipient, next);
        if (old != null && old.owner != null && !old.owner.equals(next.owner)) {
            unindex(key, old);
        }
        if (next.owner != null) {
            byOwner.computeIfAbsent(next.owner, o -> new HashSet<>()).add(key);
        }
        int delta = (next.state == State.HELD ? 1 : 0) - (old != null && old.state == State.HELD ? 1 : 0);
        if (delta != 0) {
            countHeld(key, recipient, delta);
        }
    }

    private void forget(EventKey key, Recipient recipient, Entry e) {
        if (e != null && e.state == State.HELD) {
            countHeld(key, recipient, -1);
        }
        unindex(key, e);
    }

    private void countHeld(EventKey key, Recipient recipient, int delta) {
        heldByTopic.merge(key.topicHash(), delta, (a, b) -> a + b == 0 ? null : a + b);
        if (recipient instanceof Recipient.Group g) {
            heldByGroup.merge(new GroupOf(key.topicHash(), g.name()), delta, (a, b) -> a + b == 0 ? null : a + b);
        }
        held += delta;
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

    private Entry entry(EventKey key, Recipient recipient) {
        Map<Recipient, Entry> recipients = entries.get(key);
        return recipients == null ? null : recipients.get(recipient);
    }
}
