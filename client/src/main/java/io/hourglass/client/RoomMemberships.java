package io.hourglass.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * What a {@link RoomSession} must restore on every new stream, and its requests in flight.
 *
 * <p>The server ends a session's memberships with its stream, so after a reconnect the session
 * subscribes every room again, with its mode and with {@code held_message_id} = the last ackable
 * message of the room received and not yet acked: the new session then counts as holding it, and
 * the room stays closed until that ack. (Every subscribe also carries the session's session id,
 * added by {@link RoomCodec#toFrame}: it tells a new leader which holder is back.) Acks are matched by message id, so an ack not answered
 * on the old stream (or made while no stream was open) is sent again on the new one.
 *
 * <p>Not thread-safe: owned by the session's lock. Futures are never completed here, only
 * returned as {@link Completion}s for the session to run once it has released its lock, so that
 * dependent stages never run under it.
 */
final class RoomMemberships {
    enum Kind { SUBSCRIBE, UNSUBSCRIBE, ACK, PING }

    /**
     * A session request. {@code messageId} is the acked message of an ACK and the held message
     * of a SUBSCRIBE (empty when none); {@code reply} is null for pings.
     */
    record Request(Kind kind, String room, RoomMode mode, String messageId,
                   CompletableFuture<RoomReply> reply) {
        static Request ping() {
            return new Request(Kind.PING, "", null, "", null);
        }
    }

    /** A future to complete once the session's lock is released. */
    record Completion(CompletableFuture<RoomReply> future, RoomReply reply, Throwable error) {
        void run() {
            if (error != null) {
                future.completeExceptionally(error);
            } else {
                future.complete(reply);
            }
        }
    }

    /** The rooms the user subscribed to and their modes, in subscription order. */
    private final Map<String, RoomMode> rooms = new LinkedHashMap<>();
    /** Per SYNC room: the last ackable message received and not yet acked (answered). */
    private final Map<String, String> held = new HashMap<>();
    /** Requests sent on the current stream, by request id, awaiting their reply. */
    private final Map<Long, Request> sent = new LinkedHashMap<>();
    /** Acks to send once the next stream is open, in the order they were made. */
    private final List<Request> queued = new ArrayList<>();
    /** Subscribe futures to complete with the reply to the room's next (re)subscribe. */
    private final Map<String, List<CompletableFuture<RoomReply>>> waiters = new HashMap<>();

    /**
     * Records a request of the user. Returns {@code streamOpen}: whether to send it now. Else it
     * waits for the next stream (a subscribe, an ack) or is answered at once (an unsubscribe: no
     * stream, no membership). A repeated subscribe keeps the first mode, as the server does.
     */
    boolean accept(Request request, boolean streamOpen, List<Completion> done) {
        String room = request.room();
        switch (request.kind()) {
            case SUBSCRIBE -> {
                rooms.putIfAbsent(room, request.mode());
                if (!streamOpen) {
                    awaitResubscribe(room, request.reply());
                }
            }
            case UNSUBSCRIBE -> {
                held.remove(room);
                failWaiters(room, new HourglassClientException("subscribe to room '" + room
                        + "' was withdrawn by an unsubscribe before the server answered it"), done);
                boolean wasSubscribed = rooms.remove(room) != null;
                if (!streamOpen) {
                    done.add(new Completion(request.reply(), wasSubscribed
                            ? new RoomReply(RoomReply.UNSUBSCRIBED, true)
                            : new RoomReply(RoomReply.NOT_SUBSCRIBED, false), null));
                }
            }
            case ACK -> {
                if (!streamOpen) {
                    queued.add(request);
                }
            }
            case PING -> { }
        }
        return streamOpen;
    }

    /** A copy of the subscribed rooms, in subscription order. */
    Map<String, RoomMode> rooms() {
        return Collections.unmodifiableMap(new LinkedHashMap<>(rooms));
    }

    void sent(long requestId, Request request) {
        sent.put(requestId, request);
    }

    /** Takes the request {@code requestId} off the sent table; null if unknown. */
    Request replied(long requestId) {
        return sent.remove(requestId);
    }

    /**
     * The server answered {@code request}: an answered ack no longer holds its message; a refused
     * subscribe (not a repeat) is not a membership to restore.
     */
    void answered(Request request, RoomReply reply) {
        String room = request.room();
        if (request.kind() == Kind.ACK && request.messageId().equals(held.get(room))) {
            held.remove(room);
        }
        if (request.kind() == Kind.SUBSCRIBE && !reply.ok()
                && !RoomReply.ALREADY_SUBSCRIBED.equals(reply.outcome())) {
            rooms.remove(room);
            held.remove(room);
        }
    }

    void received(ReceivedRoomMessage message) {
        if (message.ackable() && rooms.get(message.room()) == RoomMode.SYNC) {
            held.put(message.room(), message.messageId());
        }
    }

    /** An eviction ends the membership: the room is not resubscribed on the next stream. */
    void ejected(RoomEjection ejection, List<Completion> done) {
        if (ejection.reason() != RoomEjection.Reason.UNSUBSCRIBED) {
            rooms.remove(ejection.room());
            held.remove(ejection.room());
            failWaiters(ejection.room(), new HourglassClientException("session was ejected from room '"
                    + ejection.room() + "' (" + ejection.reason() + ")"), done);
        }
    }

    /**
     * The requests to send on a newly opened stream, in order: a subscribe of every room (its
     * reply completes the room's waiters), then the queued acks.
     */
    List<Request> reopen() {
        List<Request> requests = new ArrayList<>();
        for (Map.Entry<String, RoomMode> e : rooms.entrySet()) {
            String room = e.getKey();
            CompletableFuture<RoomReply> reply = new CompletableFuture<>();
            List<CompletableFuture<RoomReply>> roomWaiters = waiters.remove(room);
            if (roomWaiters != null) {
                reply.whenComplete((r, t) -> roomWaiters.forEach(w -> new Completion(w, r, t).run()));
            }
            String heldId = e.getValue() == RoomMode.SYNC ? held.getOrDefault(room, "") : "";
            requests.add(new Request(Kind.SUBSCRIBE, room, e.getValue(), heldId, reply));
        }
        requests.addAll(queued);
        queued.clear();
        return requests;
    }

    /** The stream ended: carries every unanswered request over to the next one. */
    void streamLost(List<Completion> done) {
        List<Request> unanswered = new ArrayList<>(sent.values());
        sent.clear();
        unanswered.forEach(r -> carryOver(r, done));
    }

    /**
     * Carries one unanswered request over to the next stream: a subscribe waits for the room's
     * resubscribe, an ack is sent again; an unsubscribe is done (the membership ended with the
     * stream); a ping is dropped.
     */
    void carryOver(Request request, List<Completion> done) {
        switch (request.kind()) {
            case SUBSCRIBE -> {
                if (rooms.containsKey(request.room())) {
                    awaitResubscribe(request.room(), request.reply());
                } else {
                    done.add(new Completion(request.reply(), null, new HourglassClientException(
                            "subscribe to room '" + request.room() + "' was withdrawn before the server answered it")));
                }
            }
            case ACK -> queued.add(request);
            case UNSUBSCRIBE -> done.add(new Completion(request.reply(),
                    new RoomReply(RoomReply.UNSUBSCRIBED, true), null));
            case PING -> { }
        }
    }

    /** Fails what waits for a future stream (the session is closing); keeps requests already sent. */
    void failUnsent(Throwable cause, List<Completion> done) {
        queued.forEach(r -> done.add(new Completion(r.reply(), null, cause)));
        queued.clear();
        for (String room : List.copyOf(waiters.keySet())) {
            failWaiters(room, cause, done);
        }
    }

    /** Fails every outstanding request (the session has ended). */
    void failAll(Throwable cause, List<Completion> done) {
        failUnsent(cause, done);
        sent.values().stream().filter(r -> r.reply() != null)
                .forEach(r -> done.add(new Completion(r.reply(), null, cause)));
        sent.clear();
    }

    /** Completes {@code future} with the reply to the room's subscribe on the next stream. */
    private void awaitResubscribe(String room, CompletableFuture<RoomReply> future) {
        waiters.computeIfAbsent(room, r -> new ArrayList<>()).add(future);
    }

    private void failWaiters(String room, Throwable cause, List<Completion> done) {
        List<CompletableFuture<RoomReply>> roomWaiters = waiters.remove(room);
        if (roomWaiters != null) {
            roomWaiters.forEach(w -> done.add(new Completion(w, null, cause)));
        }
    }
}
