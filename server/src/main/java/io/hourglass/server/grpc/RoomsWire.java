package io.hourglass.server.grpc;

import io.hourglass.api.v1.PendingRoomMessage;
import io.hourglass.api.v1.RoomBacklog;
import io.hourglass.api.v1.RoomEjected;
import io.hourglass.api.v1.RoomMember;
import io.hourglass.api.v1.RoomMetricsResponse;
import io.hourglass.api.v1.RoomState;
import io.hourglass.api.v1.SessionOpened;
import io.hourglass.api.v1.SessionReply;
import io.hourglass.api.v1.SessionResponse;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.proto.RoomMessage;
import io.hourglass.core.rooms.AckOutcome;
import io.hourglass.core.rooms.ClientId;
import io.hourglass.core.rooms.DeliveryGuarantee;
import io.hourglass.core.rooms.EjectReason;
import io.hourglass.core.rooms.PingOutcome;
import io.hourglass.core.rooms.RoomDelivery;
import io.hourglass.core.rooms.RoomSettings;
import io.hourglass.core.rooms.RoomSnapshot;
import io.hourglass.core.rooms.RoomsOverview;
import io.hourglass.core.rooms.SessionId;
import io.hourglass.core.rooms.SubscribeOutcome;
import io.hourglass.core.rooms.SubscriptionMode;
import io.hourglass.core.rooms.UnsubscribeOutcome;
import java.time.Duration;

/**
 * The wire form ({@code hourglass.v1} rooms messages) of the rooms engine's values, both ways.
 * Malformed input becomes an {@link InvalidRequestException} that says what is wrong.
 */
final class RoomsWire {
    /** Outcome of a session request refused before it reached the engine (bad room name, unknown mode, ...). */
    static final String INVALID_ARGUMENT = "INVALID_ARGUMENT";

    private RoomsWire() {
    }

    static SessionResponse opened(ClientId client, long clientTimeoutMs, int shards) {
        return SessionResponse.newBuilder().setOpened(SessionOpened.newBuilder().setClientId(client.toString())
                .setClientTimeoutMs(clientTimeoutMs).setShards(shards)).build();
    }

    static SessionResponse delivery(RoomDelivery d) {
        return SessionResponse.newBuilder().setDelivery(io.hourglass.api.v1.RoomDelivery.newBuilder()
                .setRoom(d.room()).setMessageId(d.messageId()).setPriority(d.priority()).setPayload(d.payload())
                .setOob(d.outOfBand()).setAckable(d.ackable()).setSentAtMs(d.sentAtMs())
                .setDeliveredAtMs(d.deliveredAtMs()).setRedelivered(d.redelivered()).setProducer(d.producer()))
                .build();
    }

    static SessionResponse ejected(String room, EjectReason reason) {
        io.hourglass.api.v1.EjectReason wire = switch (reason) {
            case UNSUBSCRIBED -> io.hourglass.api.v1.EjectReason.UNSUBSCRIBED;
            case TIMEOUT -> io.hourglass.api.v1.EjectReason.TIMEOUT;
            case ACK_TIMEOUT -> io.hourglass.api.v1.EjectReason.ACK_TIMEOUT;
        };
        return SessionResponse.newBuilder().setEjected(RoomEjected.newBuilder().setRoom(room).setReason(wire)).build();
    }

    /** The reply to a request the engine answered; {@code ok} when the request changed something. */
    static SessionResponse reply(long requestId, Enum<?> outcome) {
        return SessionResponse.newBuilder().setReply(SessionReply.newBuilder().setRequestId(requestId)
                .setOutcome(outcome.name()).setOk(changedSomething(outcome))).build();
    }

    /** The reply to a request refused as malformed; the session goes on. */
    static SessionResponse refused(long requestId, String why) {
        return SessionResponse.newBuilder().setReply(SessionReply.newBuilder().setRequestId(requestId)
                .setOutcome(INVALID_ARGUMENT).setOk(false).setError(StatusMapper.bounded(why))).build();
    }

    private static boolean changedSomething(Enum<?> outcome) {
        return outcome == SubscribeOutcome.SUBSCRIBED || outcome == UnsubscribeOutcome.UNSUBSCRIBED
                || outcome == AckOutcome.ACKED || outcome == PingOutcome.OK;
    }

    static SubscriptionMode mode(io.hourglass.api.v1.SubscriptionMode mode) {
        return switch (mode) {
            case SYNC -> SubscriptionMode.SYNC;
            case ASYNC -> SubscriptionMode.ASYNC;
            case UNRECOGNIZED -> throw new InvalidRequestException(
                    "unknown subscription mode " + mode + "; use SYNC or ASYNC");
        };
    }

    /** A client id is a UUID the broker issued: 36 characters. Longer input is refused without being parsed or echoed. */
    private static final int CLIENT_ID_LENGTH = 36;

    /** The sender's session named in a send request, or null when it names none. */
    static ClientId producer(String clientId) {
        if (clientId.isEmpty()) {
            return null;
        }
        if (clientId.length() > CLIENT_ID_LENGTH) {
            throw new InvalidRequestException("client_id is " + clientId.length() + " characters long; a client id is "
                    + "the " + CLIENT_ID_LENGTH + "-character id the session's opened frame carries");
        }
        return ClientId.parse(clientId);
    }

    static String heldMessage(String id) {
        return id.isEmpty() ? null : id;
    }

    /** The subscriber's session id, or null when it sent none (an older client); malformed ones are refused. */
    static SessionId session(String sessionId) {
        return SessionId.parseOptional(sessionId);
    }

    /** @param maxAckTimeout {@code rooms.maxAckTimeout}: the longest ack timeout a room may be given */
    static RoomSettings settings(boolean atLeastOnce, long ackTimeoutMs, Duration maxAckTimeout) {
        if (ackTimeoutMs < 0) {
            throw new InvalidRequestException("ack_timeout_ms must be 0 (none) or at least 1000, got " + ackTimeoutMs);
        }
        if (ackTimeoutMs > maxAckTimeout.toMillis()) {
            throw new InvalidRequestException("ack timeout " + ackTimeoutMs + "ms exceeds rooms.maxAckTimeout ("
                    + io.hourglass.core.config.Settings.format(maxAckTimeout) + "); use 0 for no ack timeout");
        }
        return new RoomSettings(atLeastOnce ? DeliveryGuarantee.AT_LEAST_ONCE : DeliveryGuarantee.AT_MOST_ONCE,
                Duration.ofMillis(ackTimeoutMs));
    }

    static PendingRoomMessage pending(RoomMessage m) {
        return PendingRoomMessage.newBuilder().setMessageId(m.getId()).setPriority(m.getPriority())
                .setPayload(m.getPayload()).setSentAtMs(m.getSentAtMs()).setProducer(m.getProducer()).build();
    }

    static RoomState state(RoomSnapshot s) {
        RoomState.Builder b = RoomState.newBuilder().setRoom(s.room()).setBacklog(s.backlog())
                .setListeners(s.listeners().size()).setInFlight(s.inFlightId().orElse(""))
                .setAtLeastOnce(s.settings().guarantee() == DeliveryGuarantee.AT_LEAST_ONCE)
                .setAckTimeoutMs(s.settings().ackTimeout().toMillis()).setRecovering(s.recovering());
        for (long count : s.barrierCounts()) {
            b.addBarrierLatencyCounts(count);
        }
        for (long bound : io.hourglass.core.rooms.BarrierLatency.boundsMs()) {
            b.addBarrierLatencyBoundsMs(bound);
        }
        for (RoomSnapshot.Member m : s.members()) {
            b.addMembers(RoomMember.newBuilder().setClientId(m.clientId().toString()).setLastSeenMs(m.lastSeenMs())
                    .setReady(m.ready()));
        }
        return b.build();
    }

    static RoomMetricsResponse metrics(RoomsOverview o) {
        RoomMetricsResponse.Builder b = RoomMetricsResponse.newBuilder().setRoomsWithBacklog(o.roomsWithBacklog());
        for (RoomsOverview.RoomBacklog r : o.top()) {
            b.addTop(RoomBacklog.newBuilder().setRoom(r.room()).setBacklog(r.backlog()));
        }
        return b.build();
    }
}
