package io.hourglass.core.delivery;

import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.StoredMessage;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.QueueStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Moves due messages from the store to consumers, on the delivery loop. Work per pass is
 * proportional to what it hands out, not to what is stored:
 *
 * <ul>
 *   <li>Each recipient of a topic has a <em>frontier</em>: every key before it has been offered to
 *       that recipient. A pass reads the topic's due range once, from the lowest frontier among
 *       recipients with room, with receipts merged in ({@link QueueStore#scanDueFrom}), and stops at
 *       the first key not yet due (whose due time arms a timer) or when everyone is full. A new
 *       recipient starts at the topic's first key.</li>
 *   <li>Keys behind a frontier come back only through {@link #redeliver}: a NACK, a disconnect, an
 *       in-flight timeout, or a publish applied after the frontier passed its due time. Those are
 *       point reads of exactly those keys.</li>
 * </ul>
 *
 * <p>Every check before a hand-out — in flight, receipt, expiry — reads state the loop owns or one
 * snapshot taken after every event the loop has run, and a commit always precedes its event, so a
 * receipt or delete committed before an event the loop ran is always seen.
 */
final class Dispatcher {
    private final EventStore store;
    private final Hub hub;
    private final InFlightTracker inFlight;
    private final Deleter deleter;
    private final Clock clock;
    private final DeliveryMetrics metrics;
    /** Topic → recipient → the first key not yet offered to it. */
    private final Map<String, Map<Recipient, EventKey>> frontiers = new HashMap<>();
    /** Keys behind a frontier that must be offered again (NACK, disconnect, timeout), and to whom. */
    private final TreeMap<EventKey, Set<Lane>> redeliveries = new TreeMap<>();

    /** Messages a cancel is being replicated for (and how many cancels): offered to nobody until it commits or fails. */
    private final Map<EventKey, Integer> held = new HashMap<>();
    /** Delayed NACKs: not offered to their recipient before their time. */
    private final Deferrals deferrals = new Deferrals();

    /** Replicates a durable group's deferral (a delayed NACK or a back-off), so a new leader waits too. */
    @FunctionalInterface
    interface DeferralLog {
        void replicate(EventKey key, String group, long untilMs);
    }

    private DeadLetters deadLetters;
    private DeferralLog deferralLog = (k, g, t) -> { };

    /** Wires the dead-letter moves and the deferral replication (the engine builds them around this dispatcher). */
    void policies(DeadLetters deadLetters, DeferralLog deferralLog) {
        this.deadLetters = deadLetters;
        this.deferralLog = deferralLog;
    }

    /** One recipient of one topic. */
    private record Lane(String topic, Recipient recipient) {
    }

    /** The earliest due time the last pass saw beyond now, over every topic it read to the end. */
    private long nextDueMs = Long.MAX_VALUE;

    Dispatcher(EventStore store, Hub hub, InFlightTracker inFlight, Deleter deleter, Clock clock,
               DeliveryMetrics metrics) {
        this.store = store;
        this.hub = hub;
        this.inFlight = inFlight;
        this.deleter = deleter;
        this.clock = clock;
        this.metrics = metrics;
    }

    /**
     * A new leader's start of term: it continues the delivery counts its predecessors replicated (so
     * attempt numbers and max deliveries survive failover) and waits out their durable groups'
     * deferrals. O(unacknowledged messages with a count or a deferral).
     */
    void loadReplicated() {
        store.queue().scanDeliveryCounts((key, group, deliveries) -> {
            inFlight.prior(key, new Recipient.Group(group), deliveries);
            return true;
        });
        store.queue().scanDeferred((key, group, until) -> {
            store.queue().message(key).ifPresent(m -> defer(key, new Recipient.Group(group), m.getTopic(), until));
            return true;
        });
    }

    /** Leadership lost: a new term starts from the replicated state alone. */
    void reset() {
        held.clear();
        deferrals.clear();
        if (deadLetters != null) {
            deadLetters.clear();
        }
        frontiers.clear();
        redeliveries.clear();
        nextDueMs = Long.MAX_VALUE;
    }

    /** The earliest due time a pass saw ahead of it, or a deferral's end (for the loop's timer); MAX_VALUE if none. */
    long nextDueMs() {
        return Math.min(nextDueMs, deferrals.earliest());
    }

    /** {@code recipient} gave {@code key} back with a delay: offered it again at {@code untilMs}, not before. */
    void defer(EventKey key, Recipient recipient, String topic, long untilMs) {
        deferrals.defer(key, recipient, topic, untilMs);
    }

    /**
     * A delivery came back without a delay of its own (a NACK, an in-flight timeout): offered again at
     * once, or after the group's back-off for the attempt that failed — a deferral, replicated like a
     * delayed NACK. Returns when it will be offered again (now or later).
     */
    long retry(EventKey key, Recipient recipient, String topic, long now) {
        if (recipient instanceof Recipient.Group g && deadLetters != null && limitReached(topic, g, key,
                inFlight.attempt(key, g) + 1)) {
            deadLetters.proposeQueued(); // never inside a pass's iteration: retries come before it or from a NACK
            return now; // the delivery that came back was the last one allowed: moved now, not at the next offer
        }
        long wait = backoffMs(key, recipient, topic);
        if (wait <= 0) {
            redeliver(key, recipient, topic);
            return now;
        }
        metrics.backedOff.increment();
        long until = now + wait;
        defer(key, recipient, topic, until);
        deferralLog.replicate(key, ((Recipient.Group) recipient).name(), until);
        return until;
    }

    /** The group's back-off before redelivering after attempt {@link InFlightTracker#attempt}; 0: none. */
    private long backoffMs(EventKey key, Recipient recipient, String topic) {
        return recipient instanceof Recipient.Group g
                ? BackOff.afterAttempt(store.queue().groupPolicy(topic, g.name()).orElse(null),
                        inFlight.attempt(key, recipient)) : 0;
    }

    /** Offers {@code key} of {@code topic} to {@code recipient} again on the next pass. */
    void redeliver(EventKey key, Recipient recipient, String topic) {
        redeliveries.computeIfAbsent(key, k -> new HashSet<>(2)).add(new Lane(topic, recipient));
    }

    /**
     * New messages were applied. A recipient whose frontier already passed one (the leader stamped
     * it before the last pass, which ran before the entry was applied) moves its frontier back to it:
     * such keys are always recent — behind by about one commit — so the next scan re-reads only a few
     * milliseconds of keys, skipping those already out without decoding them. Later keys the scan
     * finds as it is. Returns the earliest due time among them, for the loop to arm a timer.
     */
    long published(List<EventKey> keys) {
        long earliest = Long.MAX_VALUE;
        Map<Long, EventKey> firstPerTopic = new HashMap<>(2);
        for (EventKey key : keys) {
            earliest = Math.min(earliest, key.dueAtMs());
            firstPerTopic.merge(key.topicHash(), key, (a, b) -> a.compareTo(b) <= 0 ? a : b);
        }
        for (Map<Recipient, EventKey> lanes : frontiers.values()) {
            for (Map.Entry<Recipient, EventKey> lane : lanes.entrySet()) {
                EventKey first = firstPerTopic.get(lane.getValue().topicHash());
                if (first != null && first.compareTo(lane.getValue()) < 0) {
                    lane.setValue(first);
                }
            }
        }
        return earliest;
    }

    /** The message is gone: nothing left to redeliver. */
    void deleted(EventKey key) {
        redeliveries.remove(key);
        held.remove(key);
        deferrals.forget(key);
    }

    /** A cancel of {@code key} is on its way through Raft: offer it to nobody meanwhile. */
    void hold(EventKey key) {
        held.merge(key, 1, Integer::sum);
    }

    /**
     * The cancel of {@code key} did not delete it (it failed, or named another topic): offer it again.
     * Passes skipped it meanwhile, so the frontiers of its topic move back to it.
     */
    void unhold(EventKey key) {
        Integer left = held.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
        if (left == null && !store.queue().message(key).isEmpty()) {
            published(List.of(key));
        }
    }

    /** One pass over every topic with consumers; returns how many deliveries it made. */
    int pass() {
        metrics.dispatchPasses.increment();
        long now = clock.millis();
        inFlight.expire(now, (key, recipient, topic) -> retry(key, recipient, topic, now));
        deferrals.due(now, this::redeliver);
        nextDueMs = Long.MAX_VALUE;
        Map<String, Hub.Route> routes = new HashMap<>();
        for (String topic : hub.topics()) {
            Hub.Route route = hub.route(topic);
            if (!route.groups().isEmpty() || !route.universal().isEmpty()) {
                routes.put(topic, route);
            }
        }
        frontiers.keySet().retainAll(routes.keySet());
        int dispatched = redeliverQueued(routes, now);
        for (Hub.Route route : routes.values()) {
            dispatched += scan(route, now);
        }
        if (deadLetters != null) {
            deadLetters.proposeQueued();
        }
        return dispatched;
    }

    private int redeliverQueued(Map<String, Hub.Route> routes, long now) {
        if (redeliveries.isEmpty() || !anyLaneWithRoom(routes)) {
            return 0; // nothing is read while every recipient waiting for a redelivery is full
        }
        int n = 0;
        for (Iterator<Map.Entry<EventKey, Set<Lane>>> it = redeliveries.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<EventKey, Set<Lane>> e = it.next();
            EventKey key = e.getKey();
            e.getValue().removeIf(lane -> !routes.containsKey(lane.topic())); // nobody listens there any more
            if (e.getValue().isEmpty()) {
                it.remove();
                continue;
            }
            if (e.getValue().stream().noneMatch(lane -> hasRoom(routes.get(lane.topic()), lane.recipient()))) {
                continue; // read it once someone it waits for has room
            }
            metrics.messagesRead.increment();
            Optional<StoredMessage> stored = store.queue().message(key);
            if (stored.isEmpty() || expired(key, stored.get(), now)) {
                it.remove();
                continue;
            }
            StoredMessage message = stored.get();
            for (Iterator<Lane> l = e.getValue().iterator(); l.hasNext(); ) {
                Lane lane = l.next();
                if (!lane.topic().equals(message.getTopic())) {
                    l.remove();
                    continue;
                }
                Outcome o = offer(routes.get(lane.topic()), lane.recipient(), key, message, null, now);
                if (o != Outcome.FULL) {
                    l.remove();
                }
                if (o == Outcome.DELIVERED) {
                    n++;
                }
            }
            if (e.getValue().isEmpty()) {
                it.remove();
            }
        }
        return n;
    }

    private static boolean anyLaneWithRoom(Map<String, Hub.Route> routes) {
        for (Hub.Route route : routes.values()) {
            for (Recipient r : recipients(route)) {
                if (hasRoom(route, r)) {
                    return true;
                }
            }
        }
        return false;
    }

    private enum Outcome { DELIVERED, SKIPPED, FULL }

    /** Offers one message to one recipient, unless it is held, acknowledged, receipted or gone. */
    private Outcome offer(Hub.Route route, Recipient recipient, EventKey key, StoredMessage message,
                          List<String> receipts, long now) {
        if (held.containsKey(key)) {
            return Outcome.SKIPPED; // a cancel is being replicated: unheld, the frontiers come back here
        }
        if (deferrals.until(key, recipient) > now) {
            return Outcome.SKIPPED; // a delayed NACK: redelivered when it runs out (Deferrals.due)
        }
        if (recipient instanceof Recipient.Group g) {
            List<Consumer> members = route.groups().get(g.name());
            if (members == null) {
                return Outcome.SKIPPED;
            }
            if (!anyRoom(members)) {
                return Outcome.FULL;
            }
            if (inFlight.isBlocked(key, recipient, now)
                    || (receipts == null ? store.queue().hasReceipt(key, g.name()) : receipts.contains(g.name()))) {
                return Outcome.SKIPPED;
            }
            if (deadLetters != null && (deadLetters.moving(key, g.name()) || reachedLimit(route.topic(), g, key))) {
                return Outcome.SKIPPED; // on its way to the group's dead-letter topic
            }
            return hub.offerToGroup(route, g.name(), c -> deliver(key, message, recipient, c, now)) != null
                    ? Outcome.DELIVERED : Outcome.FULL;
        }
        Consumer c = universal(route, (Recipient.Universal) recipient);
        if (c == null) {
            return Outcome.SKIPPED;
        }
        if (!c.hasRoom()) {
            return Outcome.FULL;
        }
        if (inFlight.isBlocked(key, recipient, now)) {
            return Outcome.SKIPPED;
        }
        Delivery d = deliver(key, message, recipient, c, now);
        if (d == null) {
            return Outcome.SKIPPED;
        }
        c.push(d);
        return Outcome.DELIVERED;
    }

    /**
     * Whether the next delivery to {@code g} would pass its {@code max_deliveries}; then the message
     * is handed to the dead-letter move instead. Read only for redeliveries (a first delivery never
     * passes a limit of at least one), so the policy costs nothing on the first pass.
     */
    private boolean reachedLimit(String topic, Recipient.Group g, EventKey key) {
        return limitReached(topic, g, key, inFlight.nextAttempt(key, g));
    }

    /** Whether delivery number {@code next} would pass {@code g}'s limit; then the move is queued. */
    private boolean limitReached(String topic, Recipient.Group g, EventKey key, int next) {
        if (next <= 1) {
            return false;
        }
        io.hourglass.core.proto.GroupPolicy policy = store.queue().groupPolicy(topic, g.name()).orElse(null);
        if (policy == null || policy.getMaxDeliveries() <= 0 || next <= policy.getMaxDeliveries()
                || policy.getDeadLetterTopic().isEmpty()) {
            return false;
        }
        deadLetters.move(key, topic, g.name(), policy.getDeadLetterTopic(), next - 1, inFlight.reason(key, g));
        return true;
    }

    /** One read of the topic's due range from the lowest frontier among recipients with room. */
    private int scan(Hub.Route route, long now) {
        String topic = route.topic();
        long hash = EventKey.topicHash(topic);
        Map<Recipient, EventKey> lanes = frontiers.computeIfAbsent(topic, t -> new HashMap<>());
        List<Recipient> recipients = recipients(route);
        lanes.keySet().retainAll(recipients);
        EventKey first = new EventKey(hash, 0, 0);
        List<Recipient> active = new ArrayList<>(recipients.size());
        EventKey start = null;
        for (Recipient r : recipients) {
            if (hasRoom(route, r)) {
                active.add(r);
                EventKey f = lanes.getOrDefault(r, first);
                start = start == null || f.compareTo(start) < 0 ? f : start;
            }
        }
        if (active.isEmpty()) {
            return 0;
        }
        metrics.topicScans.increment();
        int[] n = {0};
        long next = store.queue().scanDueFrom(hash, start, now, (key, value, receipts) -> {
            StoredMessage message = null;
            for (Iterator<Recipient> it = active.iterator(); it.hasNext(); ) {
                Recipient r = it.next();
                if (key.compareTo(lanes.getOrDefault(r, first)) < 0) {
                    continue; // offered to r before
                }
                if (isDone(r, key, receipts, now)) {
                    lanes.put(r, successor(key)); // out with r already, or acknowledged: nothing to decode
                    continue;
                }
                if (message == null) {
                    metrics.messagesRead.increment();
                    message = QueueStore.parse(value);
                    if (!message.getTopic().equals(topic) || expired(key, message, now)) {
                        advanceAll(active, lanes, key, first);
                        return true; // another topic with the same hash, or its TTL passed
                    }
                }
                Outcome o = offer(route, r, key, message, receipts, now);
                if (o == Outcome.FULL) {
                    it.remove(); // its frontier stays here
                    continue;
                }
                lanes.put(r, successor(key));
                if (o == Outcome.DELIVERED) {
                    n[0]++;
                }
            }
            return !active.isEmpty();
        });
        if (!active.isEmpty()) { // the range up to now was read to its end
            EventKey end = new EventKey(hash, now + 1, 0);
            for (Recipient r : active) {
                lanes.put(r, end);
            }
            nextDueMs = Math.min(nextDueMs, next);
        }
        return n[0];
    }

    /** Held by the recipient, acknowledged by it, or (a group) receipted: skip without decoding. */
    private boolean isDone(Recipient r, EventKey key, List<String> receipts, long now) {
        return inFlight.isBlocked(key, r, now) || (r instanceof Recipient.Group g && receipts.contains(g.name()));
    }

    private static void advanceAll(List<Recipient> active, Map<Recipient, EventKey> lanes, EventKey key, EventKey first) {
        for (Recipient r : active) {
            if (key.compareTo(lanes.getOrDefault(r, first)) >= 0) {
                lanes.put(r, successor(key));
            }
        }
    }

    private static EventKey successor(EventKey key) {
        return new EventKey(key.topicHash(), key.dueAtMs(), key.sequence() + 1);
    }

    private static List<Recipient> recipients(Hub.Route route) {
        List<Recipient> out = new ArrayList<>(route.groups().size() + route.universal().size());
        for (String group : route.groups().keySet()) {
            out.add(new Recipient.Group(group));
        }
        for (Consumer c : route.universal()) {
            out.add(c.recipient());
        }
        return out;
    }

    private static boolean hasRoom(Hub.Route route, Recipient r) {
        if (r instanceof Recipient.Group g) {
            List<Consumer> members = route.groups().get(g.name());
            return members != null && anyRoom(members);
        }
        Consumer c = universal(route, (Recipient.Universal) r);
        return c != null && c.hasRoom();
    }

    private static boolean anyRoom(List<Consumer> members) {
        for (Consumer c : members) {
            if (c.hasRoom()) {
                return true;
            }
        }
        return false;
    }

    private static Consumer universal(Hub.Route route, Recipient.Universal u) {
        for (Consumer c : route.universal()) {
            if (c.id().equals(u.consumerId())) {
                return c;
            }
        }
        return null;
    }

    /** Due and past its TTL: queued for deletion (once), never delivered. */
    private boolean expired(EventKey key, StoredMessage message, long now) {
        if (message.getExpiresAtMs() > 0 && message.getExpiresAtMs() <= now) {
            if (deleter.submitOnce(key, StateApplier.ALL_GROUPS)) {
                metrics.expired.increment();
            }
            return true;
        }
        return false;
    }

    /** The delivery for {@code c}, recorded in flight; null when {@code c} was disconnected meanwhile. */
    private Delivery deliver(EventKey key, StoredMessage message, Recipient recipient, Consumer c, long now) {
        int attempt = inFlight.claim(key, recipient, c, now);
        if (attempt == 0) {
            return null;
        }
        metrics.dispatched.increment();
        if (attempt > 1) {
            metrics.redelivered.increment();
        }
        metrics.latenessMsSum.add(Math.max(0, now - message.getDueAtMs()));
        return new Delivery(key, message, attempt, now);
    }
}
