package io.hourglass.client;

import com.google.protobuf.ByteString;
import io.hourglass.api.v1.EjectReason;
import io.hourglass.api.v1.PendingRoomMessage;
import io.hourglass.api.v1.RoomBacklog;
import io.hourglass.api.v1.RoomEjected;
import io.hourglass.api.v1.RoomMember;
import io.hourglass.api.v1.RoomMetricsResponse;
import io.hourglass.api.v1.RoomPeekRequest;
import io.hourglass.api.v1.RoomPeekResponse;
import io.hourglass.api.v1.RoomState;
import io.hourglass.api.v1.SessionReply;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SessionResponse;
import io.hourglass.api.v1.SubscriptionMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The lock-step rules of ROOMS.md for {@link FakeRooms}, as far as the client tests need them:
 * the release rule, priorities, a SYNC newcomer counting as ready unless it holds the in-flight
 * message ({@code held_message_id}), out-of-band, peek, state, metrics. Times are fixed
 * ({@link FakeRooms#NOW}). Thread-safe: every method holds the engine's monitor, and frames are
 * written under it, so each session sees events in the engine's order.
 */
final class FakeRoomEngine {
    private final Map<String, Room> rooms = new HashMap<>();
    private long sequence;

    /** A message as the engine keeps it. */
    record Pending(String id, int priority, ByteString payload, long seq) {
    }

    /** Subscribe, unsubscribe or ack of session {@code s}; the reply to send. */
    synchronized SessionReply.Builder handle(FakeRooms.FakeSession s, SessionRequest q) {
        switch (q.getOpCase()) {
            case SUBSCRIBE -> {
                if (q.getSubscribe().getRoom().equals("bad")) {
                    return reply("INVALID_ARGUMENT", false).setError("room 'bad' is not allowed");
                }
                Room r = room(q.getSubscribe().getRoom());
                if (r.sync.containsKey(s) || r.async.contains(s)) {
                    return reply("ALREADY_SUBSCRIBED", false);
                }
                if (q.getSubscribe().getMode() == SubscriptionMode.ASYNC) {
                    r.async.add(s);
                } else {
                    String held = q.getSubscribe().getHeldMessageId();
                    r.sync.put(s, held.isEmpty() || !held.equals(r.inFlight));
                }
                release(r);
                return reply("SUBSCRIBED", true);
            }
            case UNSUBSCRIBE -> {
                Room r = room(q.getUnsubscribe().getRoom());
                boolean was = r.sync.remove(s) != null | r.async.remove(s);
                release(r);
                return was ? reply("UNSUBSCRIBED", true) : reply("NOT_SUBSCRIBED", false);
            }
            case ACK -> {
                Room r = room(q.getAck().getRoom());
                Boolean ready = r.sync.get(s);
                if (ready == null) {
                    return reply("NOT_MEMBER", false);
                }
                if (!q.getAck().getMessageId().equals(r.inFlight)) {
                    return reply("NOT_IN_FLIGHT", false);
                }
                if (ready) {
                    return reply("DUPLICATE", false);
                }
                r.sync.put(s, true);
                release(r);
                return reply("ACKED", true);
            }
            default -> {
                return reply("INVALID_ARGUMENT", false).setError("unexpected " + q.getOpCase());
            }
        }
    }

    static SessionReply.Builder reply(String outcome, boolean ok) {
        return SessionReply.newBuilder().setOutcome(outcome).setOk(ok);
    }

    /** The session's stream ended: it leaves every room. */
    synchronized void left(FakeRooms.FakeSession s) {
        for (Room r : rooms.values()) {
            if (r.sync.remove(s) != null | r.async.remove(s)) {
                release(r);
            }
        }
    }

    synchronized void eject(FakeRooms.FakeSession s, String room, EjectReason reason) {
        Room r = room(room);
        r.sync.remove(s);
        r.async.remove(s);
        s.push(SessionResponse.newBuilder()
                .setEjected(RoomEjected.newBuilder().setRoom(room).setReason(reason)).build());
        release(r);
    }

    synchronized String send(String room, int priority, ByteString payload) {
        Room r = room(room);
        String id = "m-" + ++sequence;
        r.pending.add(new Pending(id, priority, payload, sequence));
        release(r);
        return id;
    }

    /** Delivers at once to every subscriber; returns the id and the number of recipients. */
    synchronized Map.Entry<String, Integer> sendOutOfBand(String room, ByteString payload) {
        Room r = room(room);
        Pending m = new Pending("o-" + ++sequence, 0, payload, sequence);
        r.sync.keySet().forEach(s -> s.deliver(r.name, m, false, true));
        r.async.forEach(s -> s.deliver(r.name, m, false, true));
        return Map.entry(m.id(), r.sync.size() + r.async.size());
    }

    synchronized RoomPeekResponse peek(RoomPeekRequest q) {
        RoomPeekResponse.Builder b = RoomPeekResponse.newBuilder();
        room(q.getRoom()).pending.stream().skip(q.getOffset()).limit(q.getLimit() == 0 ? 100 : q.getLimit())
                .forEach(m -> b.addMessages(PendingRoomMessage.newBuilder().setMessageId(m.id())
                        .setPriority(m.priority()).setPayload(m.payload()).setSentAtMs(FakeRooms.NOW + m.seq())));
        return b.build();
    }

    synchronized RoomState state(String room) {
        Room r = room(room);
        RoomState.Builder b = RoomState.newBuilder().setRoom(room).setBacklog(r.pending.size())
                .setListeners(r.async.size()).setInFlight(r.inFlight);
        r.sync.forEach((s, ready) -> b.addMembers(RoomMember.newBuilder()
                .setClientId(s.clientId).setLastSeenMs(FakeRooms.NOW).setReady(ready)));
        return b.build();
    }

    synchronized RoomMetricsResponse metrics(int topN) {
        List<Room> backlogged = new ArrayList<>(rooms.values().stream().filter(r -> !r.pending.isEmpty()).toList());
        backlogged.sort(Comparator.comparingInt((Room r) -> r.pending.size()).reversed());
        RoomMetricsResponse.Builder b = RoomMetricsResponse.newBuilder().setRoomsWithBacklog(backlogged.size());
        backlogged.stream().limit(topN).forEach(r -> b.addTop(
                RoomBacklog.newBuilder().setRoom(r.name).setBacklog(r.pending.size())));
        return b.build();
    }

    private Room room(String name) {
        return rooms.computeIfAbsent(name, Room::new);
    }

    /** The release rule, evaluated after every change of the room. */
    private void release(Room r) {
        if (r.sync.isEmpty()) {
            for (Pending m : r.pending) {
                r.async.forEach(s -> s.deliver(r.name, m, false, false));
            }
            r.pending.clear();
        } else if (!r.sync.containsValue(false) && !r.pending.isEmpty()) {
            Pending head = r.pending.pollFirst();
            r.inFlight = head.id();
            r.sync.replaceAll((s, ready) -> false);
            r.sync.keySet().forEach(s -> s.deliver(r.name, head, true, false));
            r.async.forEach(s -> s.deliver(r.name, head, false, false));
        }
    }

    /** One room: pending in release order, SYNC members with their ready flag, listeners. */
    private static final class Room {
        final String name;
        final TreeSet<Pending> pending = new TreeSet<>(
                Comparator.comparingInt(Pending::priority).thenComparingLong(Pending::seq));
        final Map<FakeRooms.FakeSession, Boolean> sync = new LinkedHashMap<>();
        final Set<FakeRooms.FakeSession> async = new LinkedHashSet<>();
        String inFlight = "";

        Room(String name) {
            this.name = name;
        }
    }
}
