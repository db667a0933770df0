package io.hourglass.core.rooms;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.proto.RoomConfigureCmd;
import io.hourglass.core.proto.StoredRoom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader role of the rooms engine: client sessions, one {@link RoomGate} and one
 * {@link ReleasePipeline} per live room. Built from the replicated state when this node starts
 * leading and thrown away when it stops; the next leader rebuilds its own, and clients resubscribe.
 *
 * <p>Engine thread only: every method runs on the {@link io.hourglass.core.loop.EventLoop}; proposal callbacks come back
 * through {@code submit}. Deliveries reach sinks only after the release entry was applied here, so a
 * committed release is the proof that this node still led when the message went out.
 */
final class RoomsLeader {
    private static final Logger LOG = LoggerFactory.getLogger(RoomsLeader.class);

    private final RoomStore store;
    private final Replicator replicator;
    private final Clock clock;
    private final RoomCounters counters;
    private final List<RoomObserver> observers;
    private final LongSupplier tickets;
    private final Consumer<Runnable> submit;
    private final long defaultTimeoutMs;
    private final long loadedIndex;
    /** The leadership this is: its releases apply only in entries of its term, unless fenced off. */
    private final Reign reign;
    private final Map<ClientId, ClientSession> sessions = new HashMap<>();
    private final Map<String, RoomGate> gates = new HashMap<>();
    private final Map<String, ReleasePipeline> pipelines = new HashMap<>();
    private final Fanout fanout;

    private RoomsLeader(RoomStore store, Replicator replicator, Clock clock, RoomCounters counters,
                        List<RoomObserver> observers, LongSupplier tickets, Consumer<Runnable> submit,
                        long defaultTimeoutMs, long loadedIndex, Reign reign) {
        this.store = store;
        this.replicator = replicator;
        this.clock = clock;
        this.counters = counters;
        this.fanout = new Fanout(sessions, counters);
        this.observers = observers;
        this.tickets = tickets;
        this.submit = submit;
        this.defaultTimeoutMs = defaultTimeoutMs;
        this.loadedIndex = loadedIndex;
        this.reign = reign;
    }

    /**
     * Reads every room's replicated state. A room with a surviving backlog keeps it {@code graceMs} for
     * its members; a room with a message in flight releases nothing until every recorded holder of it
     * has resubscribed, or for {@code min(graceMs, defaultTimeoutMs)} when some do not come back.
     *
     * @param reign the leadership this node starts ({@link Reign#ANY}: releases are not fenced)
     */
    static RoomsLeader load(RoomStore store, Replicator replicator, Clock clock, RoomCounters counters,
                            List<RoomObserver> observers, LongSupplier tickets, Consumer<Runnable> submit,
                            long defaultTimeoutMs, long graceMs, Reign reign) {
        RoomStore.Loaded loaded = store.loadAll();
        RoomsLeader leader = new RoomsLeader(store, replicator, clock, counters, observers, tickets, submit,
                defaultTimeoutMs, loaded.position().index(), reign);
        long now = clock.millis();
        Set<String> names = new HashSet<>(loaded.pending().keySet());
        loaded.rooms().forEach((name, r) -> {
            if (r.hasInFlight()) {
                names.add(name);
            }
        });
        int messages = 0;
        for (String name : names) {
            StoredRoom stored = loaded.rooms().getOrDefault(name, StoredRoom.newBuilder().setRoom(name).build());
            List<PendingMessage> pending = loaded.pending().getOrDefault(name, List.of());
            messages += pending.size();
            leader.gates.put(name, RoomGate.recovered(name, settingsOf(stored), pending, StoredInFlight.of(stored),
                    now, now + graceMs, now + Math.min(graceMs, defaultTimeoutMs)));
        }
        LOG.info("rooms leader of term {} (incarnation {}) at applied {}: {} rooms with replicated state, {} pending "
                + "messages", reign.term(), reign.incarnation(), loaded.position(), names.size(), messages);
        return leader;
    }

    ClientId connect(RoomSink sink, long timeoutMs) {
        ClientSession s = new ClientSession(ClientId.random(), sink, timeoutMs);
        sessions.put(s.id, s);
        LOG.debug("{} connected (timeout {}ms)", s, timeoutMs);
        return s.id;
    }

    /** The client's stream ended: all its subscriptions go, without telling its sink. */
    void disconnect(ClientId client) {
        ClientSession s = sessions.remove(client);
        if (s == null) {
            return;
        }
        for (String room : s.rooms.keySet()) {
            gates.get(room).leave(client);
            evaluate(room);
        }
        LOG.debug("{} disconnected from {} rooms", s, s.rooms.size());
    }

    SubscribeOutcome subscribe(ClientId client, String room, SubscriptionMode mode, String heldMessageId,
                               SessionId session) {
        ClientSession s = sessions.get(client);
        if (s == null) {
            return SubscribeOutcome.UNKNOWN_CLIENT;
        }
        RoomGate gate = gateFor(room);
        long now = clock.millis();
        boolean recovering = gate.recovering(now);
        SubscribeOutcome outcome = gate.join(client, mode, heldMessageId, session, now);
        if (recovering && !gate.recovering(now)) {
            LOG.debug("room '{}' is past its failover hold: {} subscribed (session {})", room, client, session);
        }
        if (outcome == SubscribeOutcome.SUBSCRIBED) {
            s.rooms.put(room, mode);
            evaluate(room);
        }
        return outcome;
    }

    UnsubscribeOutcome unsubscribe(ClientId client, String room) {
        ClientSession s = sessions.get(client);
        if (s == null) {
            return UnsubscribeOutcome.UNKNOWN_CLIENT;
        }
        if (!s.rooms.containsKey(room)) {
            return UnsubscribeOutcome.NOT_SUBSCRIBED;
        }
        eject(client, room, EjectReason.UNSUBSCRIBED);
        return UnsubscribeOutcome.UNSUBSCRIBED;
    }

    AckOutcome ack(ClientId client, String room, String messageId) {
        if (!sessions.containsKey(client)) {
            counters.ignoredAcks.increment();
            return AckOutcome.UNKNOWN_CLIENT;
        }
        RoomGate gate = gates.get(room);
        AckOutcome outcome = gate == null ? AckOutcome.NOT_MEMBER : gate.ack(client, messageId, clock.millis());
        if (outcome == AckOutcome.ACKED) {
            counters.acks.increment();
            evaluate(room);
        } else {
            counters.ignoredAcks.increment();
        }
        return outcome;
    }

    PingOutcome ping(ClientId client) {
        return heartbeat(client) ? PingOutcome.OK : PingOutcome.UNKNOWN_CLIENT;
    }

    /** Refreshes last-seen of every sync membership of the client; false when the client is unknown. */
    boolean heartbeat(ClientId client) {
        ClientSession s = client == null ? null : sessions.get(client);
        if (s == null) {
            return false;
        }
        long now = clock.millis();
        s.rooms.forEach((room, mode) -> gates.get(room).touch(client, now));
        return true;
    }

    /** Out-of-band: straight to every current subscriber, past the gate; nothing stored or replicated. */
    OutOfBandReceipt sendOutOfBand(String room, ByteString payload, ClientId producer) {
        heartbeat(producer);
        long now = clock.millis();
        String id = RoomDelivery.OUT_OF_BAND_PREFIX + UUID.randomUUID();
        RoomGate gate = gates.get(room);
        List<ClientId> recipients = gate == null ? List.of() : gate.subscribers();
        RoomDelivery d = new RoomDelivery(room, id, 0, payload, true, false, now, now,
                producer == null ? "" : producer.toString(), false);
        for (ClientId c : recipients) {
            fanout.deliver(sessions.get(c), d);
        }
        counters.outOfBand.increment();
        return new OutOfBandReceipt(id, recipients.size());
    }

    /** A room entry was applied on this node. Entries the load already covered are skipped. */
    void onApplied(RoomChange change, long index) {
        if (index <= loadedIndex) {
            return;
        }
        String room = change.room();
        if (change instanceof RoomChange.Sent sent) {
            RoomGate gate = gateFor(room);
            sent.messages().forEach(gate::enqueue);
            counters.sent.add(sent.messages().size());
        } else if (change instanceof RoomChange.Released released) {
            ReleasePipeline pipeline = pipelines.get(room);
            Optional<ReleasePipeline.Step> step = pipeline == null ? Optional.empty()
                    : pipeline.resolve(released.ticket());
            if (step.isEmpty()) {
                return; // a retried proposal applied after its step was resolved, or another leader's entry
            }
            fanout.committed(room, step.get(), released, clock.millis())
                    .ifPresent(key -> gateFor(room).markDelivered(key, clock.millis()));
            pump(room);
        } else if (change instanceof RoomChange.Configured configured) {
            RoomGate gate = gates.get(room);
            if (gate != null) {
                gate.configure(settingsOf(configured.settings()));
            }
        }
        evaluate(room);
    }

    void onProposalFailed(String room, long ticket, Throwable error) {
        ReleasePipeline pipeline = pipelines.get(room);
        if (pipeline != null && pipeline.failed(ticket)) {
            counters.releaseFailures.increment();
            LOG.warn("release in room '{}' (ticket {}) failed, retrying on the next tick: {}", room, ticket,
                    error.getMessage());
        }
    }

    /** Evicts silent and ack-overdue members, retries failed proposals, ends recovery holds, forgets idle rooms. */
    void housekeeping() {
        long now = clock.millis();
        for (RoomGate gate : new ArrayList<>(gates.values())) {
            String room = gate.room();
            for (ClientId c : gate.silentMembers(now, this::timeoutOf)) {
                eject(c, room, EjectReason.TIMEOUT);
            }
            for (ClientId c : gate.overdueMembers(now)) {
                eject(c, room, EjectReason.ACK_TIMEOUT);
            }
            evaluate(room);
        }
        for (String room : new ArrayList<>(pipelines.keySet())) {
            pump(room);
        }
    }

    /** Read-only views over this leader's rooms. */
    RoomQueries queries() {
        return new RoomQueries(gates, store, clock.millis());
    }

    /** Leadership is gone: every session ends; nothing of this role is used again. */
    void close(String reason) {
        for (ClientSession s : sessions.values()) {
            fanout.closed(s, reason);
        }
        LOG.info("rooms leader stopped ({}): {} sessions closed, {} rooms dropped", reason, sessions.size(),
                gates.size());
        sessions.clear();
        gates.clear();
        pipelines.clear();
    }

    /**
     * Removes one subscription and tells the client and the observers. A heartbeat timeout ends the
     * client's session in every room: it must connect again for a new id.
     */
    private void eject(ClientId client, String room, EjectReason reason) {
        RoomGate gate = gates.get(room);
        if (gate == null || gate.leave(client).isEmpty()) {
            return;
        }
        if (reason != EjectReason.UNSUBSCRIBED) {
            counters.evictions.increment();
            LOG.info("client {} evicted from room '{}' ({})", client, room, reason);
        }
        ClientSession s = sessions.get(client);
        if (s == null) {
            evaluate(room);
            return;
        }
        s.rooms.remove(room);
        fanout.ejected(s, room, reason);
        for (RoomObserver o : observers) {
            try {
                o.memberEjected(room, s.id, reason);
            } catch (RuntimeException e) {
                LOG.warn("room observer failed: {}", e.toString());
            }
        }
        evaluate(room);
        if (reason == EjectReason.TIMEOUT) {
            // A heartbeat timeout means the client is gone: it leaves every room (listeners too)
            // and its id is retired, so a late ping answers UNKNOWN_CLIENT (ROOMS.md).
            for (String other : new ArrayList<>(s.rooms.keySet())) {
                eject(client, other, EjectReason.TIMEOUT);
            }
            if (sessions.remove(s.id) != null) {
                fanout.closed(s, "evicted: no heartbeat for " + s.timeoutMs + "ms");
            }
        }
    }

    private RoomGate gateFor(String room) {
        return gates.computeIfAbsent(room, r -> {
            StoredRoom stored = store.room(r);
            long now = clock.millis();
            return RoomGate.recovered(r, settingsOf(stored), List.of(), StoredInFlight.of(stored), now, now, now);
        });
    }

    /** Runs the release rule and sends its decision into replication; forgets the room when idle. */
    private void evaluate(String room) {
        RoomGate gate = gates.get(room);
        if (gate == null) {
            return;
        }
        long now = clock.millis();
        Optional<GateAction> action = gate.evaluate(now);
        if (action.isPresent()) {
            pipelines.computeIfAbsent(room, r -> new ReleasePipeline()).add(action.get(), tickets);
            pump(room);
        }
        ReleasePipeline pipeline = pipelines.get(room);
        if (gate.isIdle(now) && (pipeline == null || pipeline.isEmpty())) {
            gates.remove(room);
            pipelines.remove(room);
        }
    }

    private void pump(String room) {
        ReleasePipeline pipeline = pipelines.get(room);
        Optional<ReleasePipeline.Step> step = pipeline == null ? Optional.empty() : pipeline.takeProposal();
        if (step.isEmpty()) {
            return;
        }
        long ticket = step.get().ticket;
        try {
            replicator.propose(step.get().toCommand(room, reign)).whenComplete((reply, error) -> {
                if (error != null) {
                    submit.accept(() -> onProposalFailed(room, ticket, error));
                }
            });
        } catch (RuntimeException e) {
            onProposalFailed(room, ticket, e);
        }
    }

    private long timeoutOf(ClientId c) {
        ClientSession s = sessions.get(c);
        return s == null ? defaultTimeoutMs : s.timeoutMs;
    }

    static RoomSettings settingsOf(StoredRoom stored) {
        try {
            return RoomSettings.of(stored);
        } catch (RuntimeException e) {
            LOG.warn("room '{}' has invalid stored settings ({}); using the defaults", stored.getRoom(), e.getMessage());
            return RoomSettings.DEFAULT;
        }
    }

    private static RoomSettings settingsOf(RoomConfigureCmd cmd) {
        return settingsOf(StoredRoom.newBuilder().setGuaranteeValue(cmd.getGuaranteeValue())
                .setAckTimeoutMs(cmd.getAckTimeoutMs()).build());
    }
}
