package io.hourglass.core.rooms;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Drives one {@link RoomGate} through random histories — send, out-of-band, subscribe sync/async
 * (sometimes claiming to hold the in-flight message), unsubscribe, acks with right, stale, pending,
 * out-of-band, foreign and malformed ids, pings, time passing with evictions, ack deadlines,
 * configuration changes and failovers — and checks after every step ROOMS.md's four invariants, that
 * a released message is never overtaken nor queued again, that at most one message awaits acks, that
 * the gate agrees with an independent model of who must still ack, that a release records its
 * holders' session ids (none when a member has none), and that after a failover nothing is released
 * before the hold's deadline unless every recorded holder has resubscribed. Decisions are "committed" at
 * once, as the engine does once their entries apply. Reproduce a failure with {@code -Drooms.seed=N}.
 */
@Timeout(120)
class RoomGatePropertyTest {
    private static final int HISTORIES = 400;
    private static final int STEPS = 300;
    private static final String ROOM = "prop";

    @Test
    void invariantsHoldAfterEveryStepOfRandomHistories() {
        long seed = Long.getLong("rooms.seed", System.nanoTime());
        System.out.println("RoomGatePropertyTest seed " + seed + " (rerun with -Drooms.seed=" + seed + ")");
        Random seeds = new Random(seed);
        Map<String, Integer> seen = new java.util.TreeMap<>();
        for (int h = 0; h < HISTORIES; h++) {
            History history = new History(new Random(seeds.nextLong()), seen);
            try {
                history.play(STEPS);
            } catch (AssertionError e) {
                List<String> tail = history.log.subList(Math.max(0, history.log.size() - 60), history.log.size());
                throw new AssertionError("seed " + seed + ", history " + h + ", last steps: " + tail, e);
            }
        }
        System.out.println("RoomGatePropertyTest covered " + seen);
        for (String what : List.of("Release", "Redelivery", "Flush", "Settle", "ACKED", "DUPLICATE", "NOT_IN_FLIGHT",
                "evicted", "ack deadline", "failover", "holding", "holders recorded", "holders not known",
                "released early: every holder back", "held until the deadline")) {
            assertTrue(seen.getOrDefault(what, 0) > 0, "the histories never reached: " + what);
        }
    }

    /** One random history against one gate and a model of what the store and the members hold. */
    private static final class History {
        private final Random rnd;
        private final List<ClientId> clients = new ArrayList<>();
        private final Map<ClientId, Long> timeouts = new HashMap<>();
        /** Each client's session id; one client in three histories has none (an older client). */
        private final Map<ClientId, SessionId> sessionIds = new HashMap<>();
        private final List<String> log = new ArrayList<>();
        private RoomSettings settings = RoomSettings.DEFAULT;
        private RoomGate gate = new RoomGate(ROOM, settings);
        private long now = 1_000_000;
        private long sequence;
        // the model
        private final Map<ClientId, SubscriptionMode> subs = new HashMap<>();
        private final Map<ClientId, Long> lastSeen = new HashMap<>();
        private final TreeSet<RoomKey> storePending = new TreeSet<>();
        private final Set<RoomKey> sent = new HashSet<>();
        private final Set<RoomKey> released = new HashSet<>();
        private final Map<ClientId, List<RoomKey>> received = new HashMap<>();
        private PendingMessage storeInFlight;
        private boolean storeInFlightWhole;
        private Set<SessionId> storeHolders = Set.of();
        /** After a failover with a message in flight: until when the gate may stay shut, and for whom. */
        private long gateHoldUntil;
        private boolean holdersKnown;
        private final Set<SessionId> holdersNotBack = new HashSet<>();
        /** At least once: the replicated in-flight message a new leader sends again before anything else. */
        private PendingMessage redeliver;
        private PendingMessage inFlight;
        private final Set<ClientId> awaiting = new LinkedHashSet<>();
        private long deliveredAt;

        private final Map<String, Integer> seen;

        History(Random rnd, Map<String, Integer> seen) {
            this.rnd = rnd;
            this.seen = seen;
            for (int i = 0; i < 6; i++) {
                ClientId c = ClientId.random();
                clients.add(c);
                timeouts.put(c, 1000L + rnd.nextInt(3) * 1000L);
                if (i > 0 || rnd.nextInt(3) != 0) {
                    sessionIds.put(c, new SessionId("s-" + i));
                }
            }
        }

        void play(int steps) {
            for (int i = 0; i < steps; i++) {
                step();
                decide();
                check();
            }
        }

        private void step() {
            ClientId c = clients.get(rnd.nextInt(clients.size()));
            int op = rnd.nextInt(100);
            if (op < 22) {
                send(rnd.nextInt(5) - 2);
            } else if (op < 27) {
                outOfBand();
            } else if (op < 42) {
                subscribe(c, rnd.nextInt(4) == 0 ? SubscriptionMode.ASYNC : SubscriptionMode.SYNC);
            } else if (op < 50) {
                unsubscribe(c);
            } else if (op < 72) {
                List<ClientId> members = new ArrayList<>(syncMembers());
                members.sort(java.util.Comparator.comparing(ClientId::toString));
                ack(members.isEmpty() || rnd.nextInt(4) == 0 ? c : members.get(rnd.nextInt(members.size())));
            } else if (op < 80) {
                log.add("ping " + name(c));
                gate.touch(c, now);
                if (subs.get(c) == SubscriptionMode.SYNC) {
                    lastSeen.put(c, now);
                }
            } else if (op < 95) {
                advance(rnd.nextInt(1500));
            } else if (op < 98) {
                configure();
            } else {
                failover();
            }
        }

        private void send(int priority) {
            RoomKey key = new RoomKey(RoomKey.roomHash(ROOM), priority, sequence++);
            log.add("send p" + priority + " " + key.sequence());
            sent.add(key);
            storePending.add(key);
            assertTrue(gate.enqueue(new PendingMessage(key, ROOM, priority, now, "")));
            assertFalse(gate.enqueue(new PendingMessage(key, ROOM, priority, now, "")), "a repeat is ignored");
        }

        private void outOfBand() {
            log.add("oob");
            String before = fingerprint();
            assertEquals(subs.keySet(), new HashSet<>(gate.subscribers()), "out-of-band goes to every subscriber");
            assertEquals(before, fingerprint(), "out-of-band never touches the gate");
        }

        private void subscribe(ClientId c, SubscriptionMode mode) {
            boolean claim = inFlight != null && rnd.nextInt(3) == 0;
            log.add("subscribe " + name(c) + " " + mode + (claim ? " holding" : ""));
            SubscribeOutcome outcome = gate.join(c, mode, claim ? inFlight.id() : null, sessionIds.get(c), now);
            if (subs.containsKey(c)) {
                assertEquals(SubscribeOutcome.ALREADY_SUBSCRIBED, outcome);
                return;
            }
            assertEquals(SubscribeOutcome.SUBSCRIBED, outcome);
            subs.put(c, mode);
            holdersNotBack.remove(sessionIds.get(c));
            if (mode == SubscriptionMode.SYNC) {
                lastSeen.put(c, now);
                if (claim) {
                    count("holding");
                    awaiting.add(c);
                }
            }
        }

        private void unsubscribe(ClientId c) {
            log.add("unsubscribe " + name(c));
            assertEquals(Optional.ofNullable(subs.get(c)), gate.leave(c));
            remove(c);
        }

        private void remove(ClientId c) {
            subs.remove(c);
            lastSeen.remove(c);
            awaiting.remove(c);
        }

        private void ack(ClientId c) {
            int kind = rnd.nextInt(7);
            String id;
            AckOutcome expected;
            boolean member = subs.get(c) == SubscriptionMode.SYNC;
            if (kind <= 2 && inFlight != null) {
                id = inFlight.id();
                expected = awaiting.contains(c) ? AckOutcome.ACKED : AckOutcome.DUPLICATE;
            } else if (kind == 3 && !released.isEmpty()) {
                RoomKey stale = released.stream().filter(k -> inFlight == null || !k.equals(inFlight.key()))
                        .findAny().orElse(null);
                id = stale == null ? "zz" : stale.id();
                expected = stale == null ? AckOutcome.UNKNOWN_MESSAGE : AckOutcome.NOT_IN_FLIGHT;
            } else if (kind == 4 && !storePending.isEmpty()) {
                id = storePending.first().id();
                expected = AckOutcome.NOT_IN_FLIGHT;
            } else if (kind == 5) {
                id = RoomDelivery.OUT_OF_BAND_PREFIX + "x";
                expected = AckOutcome.OUT_OF_BAND;
            } else {
                id = rnd.nextBoolean() ? "garbage" : new RoomKey(RoomKey.roomHash("other"), 0, 1).id();
                expected = AckOutcome.UNKNOWN_MESSAGE;
            }
            log.add("ack " + name(c) + " " + expected);
            AckOutcome outcome = gate.ack(c, id, now);
            count(outcome.name());
            assertEquals(member ? expected : AckOutcome.NOT_MEMBER, outcome, "ack " + id);
            if (outcome == AckOutcome.ACKED || outcome == AckOutcome.DUPLICATE) {
                awaiting.remove(c);
                lastSeen.put(c, now);
            }
        }

        private void advance(int ms) {
            now += ms;
            log.add("advance " + ms);
            Set<ClientId> silent = new HashSet<>(gate.silentMembers(now, timeouts::get));
            Set<ClientId> expectedSilent = new HashSet<>();
            lastSeen.forEach((c, seen) -> {
                if (now - seen >= timeouts.get(c)) {
                    expectedSilent.add(c);
                }
            });
            assertEquals(expectedSilent, silent, "evicted exactly when the timeout has passed");
            silent.forEach(c -> count("evicted"));
            for (ClientId c : silent) {
                assertTrue(gate.leave(c).isPresent());
                remove(c);
            }
            Set<ClientId> overdue = new HashSet<>(gate.overdueMembers(now));
            boolean deadline = settings.hasAckTimeout() && inFlight != null
                    && now - deliveredAt >= settings.ackTimeout().toMillis();
            assertEquals(deadline ? awaiting : Set.of(), overdue, "ack deadline");
            overdue.forEach(c -> count("ack deadline"));
            for (ClientId c : overdue) {
                gate.leave(c);
                remove(c);
            }
        }

        private void configure() {
            settings = new RoomSettings(rnd.nextBoolean() ? DeliveryGuarantee.AT_LEAST_ONCE
                    : DeliveryGuarantee.AT_MOST_ONCE, rnd.nextBoolean() ? Duration.ZERO : Duration.ofSeconds(1));
            log.add("configure " + settings);
            gate.configure(settings);
        }

        /** A new leader: membership is gone, the gate is rebuilt from what the store holds. */
        private void failover() {
            log.add("failover");
            count("failover");
            List<PendingMessage> pending = storePending.stream()
                    .map(k -> new PendingMessage(k, ROOM, k.priority(), 0, "")).toList();
            gate = RoomGate.recovered(ROOM, settings, pending, storeInFlight == null ? null
                    : new StoredInFlight(storeInFlight, storeInFlightWhole, storeHolders), now, now + 2000, now + 1000);
            gateHoldUntil = storeInFlight == null ? 0 : now + 1000;
            holdersKnown = !storeHolders.isEmpty();
            holdersNotBack.clear();
            holdersNotBack.addAll(storeHolders);
            subs.clear();
            lastSeen.clear();
            awaiting.clear();
            boolean redelivers = storeInFlight != null && storeInFlightWhole
                    && settings.guarantee() == DeliveryGuarantee.AT_LEAST_ONCE;
            redeliver = redelivers ? storeInFlight : null;
            inFlight = redelivers ? null : storeInFlight;
            deliveredAt = now;
        }

        /** Runs the release rule and commits its decision, checking what it decided. */
        private void decide() {
            Optional<GateAction> action = gate.evaluate(now);
            if (action.isEmpty()) {
                return;
            }
            log.add("-> " + action.get().getClass().getSimpleName());
            boolean gated = !gate.members().isEmpty(); // without sync members rule 1 and the backlog hold apply
            if (gated && now < gateHoldUntil) {
                assertTrue(holdersKnown && holdersNotBack.isEmpty(),
                        "within the failover hold only once every recorded holder is back: " + holdersNotBack);
                count("released early: every holder back");
            } else if (gated && gateHoldUntil != 0 && now >= gateHoldUntil && !holdersNotBack.isEmpty()) {
                count("held until the deadline");
            }
            count(action.get() instanceof GateAction.Release r && r.redelivery() ? "Redelivery"
                    : action.get().getClass().getSimpleName());
            if (action.get() instanceof GateAction.Release r) {
                released(r);
            } else if (action.get() instanceof GateAction.Flush f) {
                flushed(f);
            } else if (action.get() instanceof GateAction.Settle s) {
                // Both modes settle: an at-most-once room clears its in-flight record so that a
                // failover while it is idle does not hold it.
                assertTrue(awaiting.isEmpty(), "settled only once everyone acked");
                settle(s.message());
            }
            assertTrue(gate.evaluate(now).isEmpty(), "one evaluation per change is enough");
        }

        private void released(GateAction.Release r) {
            RoomKey key = r.message().key();
            assertTrue(awaiting.isEmpty(), "released only when every sync member acked the last one");
            if (r.redelivery()) {
                assertNotNull(redeliver);
                assertEquals(redeliver.key(), key, "only the replicated in-flight message goes out again");
                redeliver = null;
            } else {
                assertEquals(null, redeliver, "the redelivery goes out before anything else");
                assertFalse(released.contains(key), "never re-queued");
                assertEquals(storePending.first(), key, "the head: nothing pending is ahead of it");
                storePending.remove(key);
                released.add(key);
            }
            assertEquals(syncMembers(), r.members());
            assertEquals(subsIn(SubscriptionMode.ASYNC), r.listeners());
            boolean known = r.members().stream().allMatch(sessionIds::containsKey);
            Set<SessionId> holders = new TreeSet<>();
            r.members().stream().filter(sessionIds::containsKey).forEach(c -> holders.add(sessionIds.get(c)));
            assertEquals(known ? List.copyOf(holders) : List.of(), r.holders(),
                    "a release records every member's session id, or none when one has none");
            count(known && !holders.isEmpty() ? "holders recorded" : "holders not known");
            storeHolders = Set.copyOf(r.holders());
            storeInFlightWhole = settings.guarantee() == DeliveryGuarantee.AT_LEAST_ONCE
                    && (!r.redelivery() || storeInFlightWhole);
            storeInFlight = r.message();
            inFlight = r.message();
            awaiting.addAll(r.members());
            for (ClientId c : r.members()) {
                receive(c, key, r.redelivery());
            }
            for (ClientId c : r.listeners()) {
                receive(c, key, r.redelivery());
            }
            gate.markDelivered(key, now);
            deliveredAt = now;
        }

        private void flushed(GateAction.Flush f) {
            assertTrue(syncMembers().isEmpty(), "rule 1 only without sync members");
            List<RoomKey> keys = f.messages().stream().map(PendingMessage::key).toList();
            List<RoomKey> expected = new ArrayList<>();
            boolean redelivered = redeliver != null;
            if (redelivered) {
                expected.add(redeliver.key()); // the redelivery goes first
                redeliver = null;
            }
            expected.addAll(storePending);
            assertEquals(expected, keys, "all pending, in release order");
            storePending.clear();
            released.addAll(keys);
            assertEquals(!expected.isEmpty() && redelivered, f.redeliveryFirst());
            for (ClientId c : f.listeners()) {
                for (int i = 0; i < keys.size(); i++) {
                    receive(c, keys.get(i), i == 0 && f.redeliveryFirst());
                }
            }
            settle(f.settles());
            inFlight = null;
        }

        private void settle(PendingMessage m) {
            if (m != null && storeInFlight != null && storeInFlight.key().equals(m.key())) {
                storeInFlight = null;
                storeHolders = Set.of();
            }
        }

        private void receive(ClientId c, RoomKey key, boolean redelivery) {
            List<RoomKey> got = received.computeIfAbsent(c, x -> new ArrayList<>());
            if (!redelivery) {
                assertFalse(got.contains(key), name(c) + " receives each message once");
            }
            got.add(key);
        }

        private void check() {
            Set<ClientId> s = gate.members().keySet();
            Set<ClientId> r = gate.ready();
            assertTrue(s.containsAll(r), "1. R ⊆ S");
            if (s.isEmpty() && !gate.recovering(now)) {
                assertEquals(0, gate.backlog(), "2. S = ∅ ⇒ pending = ∅");
            }
            if (!s.isEmpty() && gate.backlog() > 0 && !gate.recovering(now)) {
                // (a failover's hold keeps the gate shut while members come back)
                assertFalse(r.equals(s), "3. S ≠ ∅ ∧ pending ≠ ∅ ⇒ R ≠ S");
            }
            if (!awaiting.isEmpty()) {
                assertNotNull(inFlight, "4. what members await is the in-flight message");
                assertEquals(Optional.of(inFlight.key()), gate.inFlight().map(PendingMessage::key),
                        "4. at most one message awaits acks");
            }
            assertEquals(syncMembers(), s, "S matches the model");
            assertEquals(subsIn(SubscriptionMode.ASYNC), gate.listeners(), "listeners match the model");
            Set<ClientId> expectedReady = new HashSet<>(s);
            expectedReady.removeAll(awaiting);
            assertEquals(expectedReady, r, "R = S minus those who still owe an ack");
            Set<RoomKey> accounted = new HashSet<>(storePending);
            accounted.addAll(released);
            assertEquals(sent, accounted, "every message is pending or released, never lost in between");
            List<RoomKey> view = gate.pendingInOrder(0, Integer.MAX_VALUE).stream().map(PendingMessage::key).toList();
            List<RoomKey> expectedView = new ArrayList<>();
            if (redeliver != null) {
                expectedView.add(redeliver.key());
            }
            expectedView.addAll(storePending);
            assertEquals(expectedView, view, "peek shows pending in release order, the redelivery first");
            assertEquals(expectedView.size(), gate.backlog());
        }

        private Set<ClientId> syncMembers() {
            return subsIn(SubscriptionMode.SYNC);
        }

        private Set<ClientId> subsIn(SubscriptionMode mode) {
            Set<ClientId> out = new HashSet<>();
            subs.forEach((c, m) -> {
                if (m == mode) {
                    out.add(c);
                }
            });
            return out;
        }

        private String fingerprint() {
            return gate.members() + "|" + gate.ready() + "|" + gate.listeners() + "|"
                    + gate.pendingInOrder(0, Integer.MAX_VALUE) + "|" + gate.inFlight();
        }

        private void count(String what) {
            seen.merge(what, 1, Integer::sum);
        }

        private String name(ClientId c) {
            return "c" + clients.indexOf(c);
        }
    }
}
