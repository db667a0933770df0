package io.hourglass.core.rooms;

import io.hourglass.core.proto.RoomMessage;
import io.hourglass.core.proto.StoredRoom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The read-only questions about rooms (peek, state, backlog overview), answered from the leader's
 * gates and, for payloads, the store. Engine thread only; changes nothing.
 */
final class RoomQueries {
    private final Map<String, RoomGate> gates;
    private final RoomStore store;
    private final long nowMs;

    RoomQueries(Map<String, RoomGate> gates, RoomStore store, long nowMs) {
        this.gates = gates;
        this.store = store;
        this.nowMs = nowMs;
    }

    /** Pending messages in release order, excluding the in-flight one, whole. */
    List<RoomMessage> peek(String room, int offset, int limit) {
        RoomGate gate = gates.get(room);
        if (gate == null) {
            return List.of();
        }
        List<RoomMessage> out = new ArrayList<>();
        for (PendingMessage m : gate.pendingInOrder(offset, limit)) {
            Optional<RoomMessage> stored = store.message(room, m.key());
            if (stored.isEmpty()) {
                StoredRoom r = store.room(room); // an at-least-once redelivery lives in the room's record
                stored = r.hasInFlight() && r.getInFlight().getId().equals(m.id()) ? Optional.of(r.getInFlight())
                        : Optional.empty();
            }
            stored.ifPresent(out::add);
        }
        return out;
    }

    RoomSnapshot state(String room) {
        RoomGate gate = gates.get(room);
        if (gate == null) {
            return new RoomSnapshot(room, RoomsLeader.settingsOf(store.room(room)), 0, List.of(), List.of(),
                    Optional.empty(), false);
        }
        List<RoomSnapshot.Member> members = new ArrayList<>();
        gate.members().forEach((c, seen) -> members.add(new RoomSnapshot.Member(c, seen, gate.ready().contains(c))));
        return new RoomSnapshot(room, gate.settings(), gate.backlog(), members, List.copyOf(gate.listeners()),
                gate.inFlight().map(PendingMessage::id), gate.recovering(nowMs), gate.barrierLatency().counts());
    }

    /**
     * The rooms this leader knows (members, listeners or a backlog), by name, from {@code offset};
     * at most {@code limit}. One snapshot per room, as {@link #state} gives it.
     */
    List<RoomSnapshot> list(int offset, int limit) {
        List<String> names = new ArrayList<>(new java.util.TreeSet<>(gates.keySet()));
        List<RoomSnapshot> out = new ArrayList<>();
        for (int i = offset; i < names.size() && out.size() < limit; i++) {
            out.add(state(names.get(i)));
        }
        return out;
    }

    RoomsOverview overview(int topN) {
        List<RoomsOverview.RoomBacklog> withBacklog = new ArrayList<>();
        gates.values().forEach(g -> {
            if (g.backlog() > 0) {
                withBacklog.add(new RoomsOverview.RoomBacklog(g.room(), g.backlog()));
            }
        });
        withBacklog.sort(Comparator.comparingInt(RoomsOverview.RoomBacklog::backlog).reversed()
                .thenComparing(RoomsOverview.RoomBacklog::room));
        return new RoomsOverview(withBacklog.size(), withBacklog.subList(0, Math.min(topN, withBacklog.size())));
    }
}
