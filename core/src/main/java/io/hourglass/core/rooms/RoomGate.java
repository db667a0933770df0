package io.hourglass.core.rooms;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;

/**
 * The lock-step gate of one room (ROOMS.md): sync members S with their last-seen times, the ready
 * set R, async listeners, the pending messages in release order and the in-flight message.
 *
 * <p>Pure and deterministic: time comes in as arguments and decisions go out as {@link GateAction}s;
 * nothing here replicates, delivers or reads a clock. A decision takes effect in the gate at once
 * (the head leaves pending, R is cleared); the engine replicates it and delivers when committed.
 *
 * <p>Invariants, whenever {@link #evaluate} has run after the last change (the engine evaluates after
 * every send, ack, subscribe, unsubscribe, eviction and housekeeping tick):
 * <ol>
 *   <li>R ⊆ S;</li>
 *   <li>S = ∅ ⇒ pending = ∅ — except while {@link #recovering} after a failover, when a surviving
 *       backlog waits (until the first sync member is back, or the grace ends) for its members;</li>
 *   <li>S ≠ ∅ ∧ pending ≠ ∅ ⇒ R ≠ S — except while {@link #recovering} after a failover with a message
 *       in flight, when nothing is released until every recorded holder of that message is back or
 *       the client timeout has passed ({@link FailoverHold});</li>
 *   <li>at most one message awaits acks ({@link #inFlight()}); a released message is never
 *       overtaken nor queued again (the at-least-once redelivery after a failover goes out first).</li>
 * </ol>
 *
 * <p>Every release records its holders: the {@link SessionId}s of the sync members it goes to, so that
 * a future leader's {@link FailoverHold} knows whom to wait for. It records none (the hold then lasts
 * its full time) when a member has no session id, or when there are more than
 * {@value #MAX_RECORDED_HOLDERS} members.
 *
 * <p>Not thread-safe: owned by the engine thread, or by a test.
 */
final class RoomGate {
    /** Beyond this many sync members a release records no holders: the entry stays small. */
    static final int MAX_RECORDED_HOLDERS = 1024;
    private static final long NOT_DELIVERED = Long.MIN_VALUE;

    private final String room;
    private final long roomHash;
    private RoomSettings settings;
    /** S: sync member → last-seen time (ms); join order. */
    private final Map<ClientId, Long> members = new LinkedHashMap<>();
    /** R ⊆ S: members ready for the next message. */
    private final Set<ClientId> ready = new LinkedHashSet<>();
    /** The session ids of the members of S that gave one; its keys ⊆ S. */
    private final Map<ClientId, SessionId> sessions = new HashMap<>();
    private final Set<ClientId> listeners = new LinkedHashSet<>();
    /** Pending messages in release order (priority, then sequence). */
    private final TreeMap<RoomKey, PendingMessage> pending = new TreeMap<>();
    /** At least once: the message in flight when this leader took over; released again before anything else. */
    private PendingMessage redeliver;
    /** The last message released to sync members, or null; the only message whose ack counts. */
    private PendingMessage inFlight;
    private long deliveredAtMs = NOT_DELIVERED;
    private final BarrierLatency barrier = new BarrierLatency();
    /**
     * The store still records {@link #inFlight} as in flight and no release will replace it yet:
     * once every sync member has acked it and nothing is pending, a Settle clears the record. In an
     * at-least-once room that ends the redelivery duty; in an at-most-once room it tells a future
     * leader that nobody holds a message, so that it need not hold the room after a failover.
     */
    private boolean settleDue;
    /** After a failover: what the room waits for before the ordinary rules apply again. */
    private FailoverHold hold = FailoverHold.none();

    RoomGate(String room, RoomSettings settings) {
        this.room = room;
        this.roomHash = RoomKey.roomHash(room);
        this.settings = settings;
    }

    /**
     * The gate a new leader builds from the replicated state. An at-least-once in-flight message kept
     * whole is released again first; otherwise the in-flight message stays in flight, never
     * redelivered, so that members that resubscribe saying they hold it gate the room until they ack
     * it. A room with a backlog keeps it until {@code backlogHoldUntilMs} even without sync members; a
     * room with a message in flight releases nothing until its recorded holders are all back or the
     * clock reaches {@code gateHoldUntilMs} ({@link FailoverHold}).
     *
     * @param stored the room's in-flight record, or null when it has none
     */
    static RoomGate recovered(String room, RoomSettings settings, Collection<PendingMessage> pending,
                              StoredInFlight stored, long nowMs, long backlogHoldUntilMs, long gateHoldUntilMs) {
        RoomGate g = new RoomGate(room, settings);
        for (PendingMessage m : pending) {
            g.pending.put(m.key(), m);
        }
        if (stored != null && stored.whole() && settings.guarantee() == DeliveryGuarantee.AT_LEAST_ONCE) {
            g.redeliver = stored.message();
        } else if (stored != null) {
            g.inFlight = stored.message();
            g.deliveredAtMs = nowMs;
            g.settleDue = true; // cleared once the members are back and ready, if nothing is released first
        }
        g.hold = FailoverHold.until(!g.pending.isEmpty() || g.redeliver != null ? backlogHoldUntilMs : 0,
                stored != null ? gateHoldUntilMs : 0, stored != null ? stored.holders() : Set.of());
        return g;
    }

    String room() {
        return room;
    }

    RoomSettings settings() {
        return settings;
    }

    void configure(RoomSettings newSettings) {
        settings = newSettings;
    }

    /**
     * Adds a subscription. A sync member joins S and R, so it neither blocks nor receives the message
     * in flight — unless it says it holds that message ({@code heldMessageId}, a client resubscribing
     * after a failover): then it joins unready and the room waits for its ack. After a failover, the
     * subscriber's {@code session} tells the {@link FailoverHold} that one more holder is back.
     *
     * @param session the client's session id, or null when it gave none
     */
    SubscribeOutcome join(ClientId client, SubscriptionMode mode, String heldMessageId, SessionId session,
                          long nowMs) {
        if (members.containsKey(client) || listeners.contains(client)) {
            return SubscribeOutcome.ALREADY_SUBSCRIBED;
        }
        if (mode == SubscriptionMode.ASYNC) {
            listeners.add(client);
        } else {
            members.put(client, nowMs);
            if (session != null) {
                sessions.put(client, session);
            }
            if (inFlight == null || heldMessageId == null || !heldMessageId.equals(inFlight.id())) {
                ready.add(client);
            }
        }
        hold.subscribed(mode, session);
        return SubscribeOutcome.SUBSCRIBED;
    }

    /** Removes the client's subscription, if any; returns its mode. */
    Optional<SubscriptionMode> leave(ClientId client) {
        if (members.remove(client) != null) {
            ready.remove(client);
            sessions.remove(client);
            return Optional.of(SubscriptionMode.SYNC);
        }
        return listeners.remove(client) ? Optional.of(SubscriptionMode.ASYNC) : Optional.empty();
    }

    Optional<SubscriptionMode> modeOf(ClientId client) {
        if (members.containsKey(client)) {
            return Optional.of(SubscriptionMode.SYNC);
        }
        return listeners.contains(client) ? Optional.of(SubscriptionMode.ASYNC) : Optional.empty();
    }

    /** An ack counts only from a sync member and only for the in-flight message; it also refreshes last-seen. */
    AckOutcome ack(ClientId client, String messageId, long nowMs) {
        if (!members.containsKey(client)) {
            return AckOutcome.NOT_MEMBER;
        }
        if (messageId != null && messageId.startsWith(RoomDelivery.OUT_OF_BAND_PREFIX)) {
            return AckOutcome.OUT_OF_BAND;
        }
        Optional<RoomKey> key = RoomKey.fromId(messageId);
        if (key.isEmpty() || key.get().roomHash() != roomHash) {
            return AckOutcome.UNKNOWN_MESSAGE;
        }
        if (inFlight == null || !inFlight.key().equals(key.get())) {
            return AckOutcome.NOT_IN_FLIGHT;
        }
        members.put(client, nowMs);
        if (!ready.add(client)) {
            return AckOutcome.DUPLICATE;
        }
        if (ready.size() == members.size() && deliveredAtMs != NOT_DELIVERED) {
            barrier.record(nowMs - deliveredAtMs); // the last sync member's ack completes the barrier
        }
        return AckOutcome.ACKED;
    }

    /** How long this room's barriers took on this leader. */
    BarrierLatency barrierLatency() {
        return barrier;
    }

    /** A heartbeat: refreshes the member's last-seen time (no-op for non-members). */
    void touch(ClientId client, long nowMs) {
        members.computeIfPresent(client, (c, t) -> Math.max(t, nowMs));
    }

    /** Adds a committed message to pending; false when the gate already knows it. */
    boolean enqueue(PendingMessage m) {
        RoomKey k = m.key();
        if (pending.containsKey(k) || (inFlight != null && inFlight.key().equals(k))
                || (redeliver != null && redeliver.key().equals(k))) {
            return false;
        }
        pending.put(k, m);
        return true;
    }

    /** The in-flight message reached its recipients: its ack deadline starts now. */
    void markDelivered(RoomKey key, long nowMs) {
        if (inFlight != null && inFlight.key().equals(key) && deliveredAtMs == NOT_DELIVERED) {
            deliveredAtMs = nowMs;
        }
    }

    /**
     * The release rule (ROOMS.md). Returns at most one decision, already taken in the gate; one call
     * after each change is enough, because a decision leaves nothing more to decide until the next change.
     */
    Optional<GateAction> evaluate(long nowMs) {
        if (members.isEmpty()) {
            return evaluateWithoutMembers(nowMs);
        }
        if (hold.holdsGate(nowMs)) {
            return Optional.empty();
        }
        if (ready.size() < members.size()) {
            return Optional.empty();
        }
        PendingMessage head = redeliver != null ? redeliver
                : pending.isEmpty() ? null : pending.firstEntry().getValue();
        if (head == null) {
            if (settleDue) {
                settleDue = false;
                return Optional.of(new GateAction.Settle(room, inFlight));
            }
            return Optional.empty();
        }
        boolean again = head == redeliver;
        if (again) {
            redeliver = null;
        } else {
            pending.remove(head.key());
        }
        ready.clear();
        inFlight = head;
        deliveredAtMs = NOT_DELIVERED;
        settleDue = true;
        return Optional.of(new GateAction.Release(room, head, members.keySet(), listeners, again, holders()));
    }

    /** The session ids of S, sorted; none when a member has none or S is too large to record. */
    private List<SessionId> holders() {
        if (sessions.size() < members.size() || members.size() > MAX_RECORDED_HOLDERS) {
            return List.of();
        }
        return List.copyOf(new TreeSet<>(sessions.values()));
    }

    private Optional<GateAction> evaluateWithoutMembers(long nowMs) {
        if (hold.keepsBacklog(nowMs)) {
            return Optional.empty();
        }
        if (pending.isEmpty() && redeliver == null) {
            if (settleDue) {
                settleDue = false;
                return Optional.of(new GateAction.Settle(room, inFlight));
            }
            return Optional.empty();
        }
        PendingMessage settles = redeliver != null ? redeliver : inFlight;
        boolean again = redeliver != null;
        List<PendingMessage> all = new ArrayList<>(pending.size() + 1);
        if (again) {
            all.add(redeliver);
            redeliver = null;
        }
        all.addAll(pending.values());
        pending.clear();
        inFlight = null;
        deliveredAtMs = NOT_DELIVERED;
        settleDue = false;
        return Optional.of(new GateAction.Flush(room, all, listeners, settles, again));
    }

    /** Sync members whose last-seen time is at least their client timeout old. */
    List<ClientId> silentMembers(long nowMs, ToLongFunction<ClientId> timeoutMs) {
        List<ClientId> out = new ArrayList<>();
        members.forEach((c, seen) -> {
            if (nowMs - seen >= timeoutMs.applyAsLong(c)) {
                out.add(c);
            }
        });
        return out;
    }

    /** Sync members that have held the delivered in-flight message unacked for the room's ack timeout. */
    List<ClientId> overdueMembers(long nowMs) {
        if (!settings.hasAckTimeout() || inFlight == null || deliveredAtMs == NOT_DELIVERED
                || nowMs - deliveredAtMs < settings.ackTimeout().toMillis()) {
            return List.of();
        }
        return members.keySet().stream().filter(c -> !ready.contains(c)).toList();
    }

    /** Whether a failover hold is on: a surviving backlog or the gate waits for members to come back. */
    boolean recovering(long nowMs) {
        return hold.active(nowMs);
    }

    /** Whether the gate holds nothing worth keeping; the engine then forgets it. */
    boolean isIdle(long nowMs) {
        return members.isEmpty() && listeners.isEmpty() && pending.isEmpty() && redeliver == null && !settleDue
                && !recovering(nowMs);
    }

    /** Pending messages in release order (the redelivery first), skipping {@code offset}. */
    List<PendingMessage> pendingInOrder(int offset, int limit) {
        return Stream.concat(Stream.ofNullable(redeliver), pending.values().stream()).skip(offset).limit(limit)
                .toList();
    }

    int backlog() {
        return pending.size() + (redeliver == null ? 0 : 1);
    }

    /** S with last-seen times, in join order. */
    Map<ClientId, Long> members() {
        return java.util.Collections.unmodifiableMap(members);
    }

    Set<ClientId> ready() {
        return java.util.Collections.unmodifiableSet(ready);
    }

    Set<ClientId> listeners() {
        return java.util.Collections.unmodifiableSet(listeners);
    }

    /** Every current subscriber, sync then async. */
    List<ClientId> subscribers() {
        List<ClientId> all = new ArrayList<>(members.keySet());
        all.addAll(listeners);
        return all;
    }

    Optional<PendingMessage> inFlight() {
        return Optional.ofNullable(inFlight);
    }
}
