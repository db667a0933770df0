package io.hourglass.client;

import io.hourglass.api.v1.PendingRoomMessage;
import io.hourglass.api.v1.RoomAck;
import io.hourglass.api.v1.RoomBacklog;
import io.hourglass.api.v1.RoomDelivery;
import io.hourglass.api.v1.RoomEjected;
import io.hourglass.api.v1.RoomMember;
import io.hourglass.api.v1.RoomMetricsResponse;
import io.hourglass.api.v1.RoomPing;
import io.hourglass.api.v1.RoomState;
import io.hourglass.api.v1.RoomSubscribe;
import io.hourglass.api.v1.RoomUnsubscribe;
import io.hourglass.api.v1.SessionRequest;
import io.hourglass.api.v1.SubscriptionMode;
import java.time.Duration;

/** Converts between the client's room types and the wire messages of {@code rooms.proto}. */
final class RoomCodec {
    private RoomCodec() {
    }

    static SubscriptionMode toProto(RoomMode mode) {
        return switch (mode) {
            case SYNC -> SubscriptionMode.SYNC;
            case ASYNC -> SubscriptionMode.ASYNC;
        };
    }

    /** The frame that sends a session request as {@code requestId}; a subscribe carries {@code sessionId}. */
    static SessionRequest toFrame(long requestId, RoomMemberships.Request request, String sessionId) {
        SessionRequest.Builder frame = SessionRequest.newBuilder().setRequestId(requestId);
        switch (request.kind()) {
            case SUBSCRIBE -> frame.setSubscribe(RoomSubscribe.newBuilder().setRoom(request.room())
                    .setMode(toProto(request.mode())).setHeldMessageId(request.messageId())
                    .setSessionId(sessionId));
            case UNSUBSCRIBE -> frame.setUnsubscribe(RoomUnsubscribe.newBuilder().setRoom(request.room()));
            case ACK -> frame.setAck(RoomAck.newBuilder().setRoom(request.room())
                    .setMessageId(request.messageId()));
            case PING -> frame.setPing(RoomPing.getDefaultInstance());
        }
        return frame.build();
    }

    static ReceivedRoomMessage fromProto(RoomDelivery d) {
        return new ReceivedRoomMessage(d.getRoom(), d.getMessageId(), d.getPriority(),
                d.getPayload().toByteArray(), d.getOob(), d.getAckable(), d.getRedelivered(),
                d.getProducer(), d.getSentAtMs(), d.getDeliveredAtMs());
    }

    static RoomEjection fromProto(RoomEjected e) {
        RoomEjection.Reason reason = switch (e.getReason()) {
            case UNSUBSCRIBED -> RoomEjection.Reason.UNSUBSCRIBED;
            case TIMEOUT -> RoomEjection.Reason.TIMEOUT;
            case ACK_TIMEOUT -> RoomEjection.Reason.ACK_TIMEOUT;
            default -> RoomEjection.Reason.UNKNOWN;
        };
        return new RoomEjection(e.getRoom(), reason);
    }

    static QueuedRoomMessage fromProto(PendingRoomMessage m) {
        return new QueuedRoomMessage(m.getMessageId(), m.getPriority(), m.getPayload().toByteArray(),
                m.getProducer(), m.getSentAtMs());
    }

    static RoomStatus fromProto(RoomState s) {
        return new RoomStatus(s.getRoom(), s.getBacklog(),
                s.getMembersList().stream().map(RoomCodec::fromProto).toList(), s.getListeners(),
                s.getInFlight(), s.getAtLeastOnce(), Duration.ofMillis(s.getAckTimeoutMs()),
                s.getRecovering());
    }

    static RoomStatus.Member fromProto(RoomMember m) {
        return new RoomStatus.Member(m.getClientId(), m.getLastSeenMs(), m.getReady());
    }

    static RoomMetrics fromProto(RoomMetricsResponse r) {
        return new RoomMetrics(r.getRoomsWithBacklog(),
                r.getTopList().stream().map(RoomCodec::fromProto).toList());
    }

    static RoomMetrics.Backlog fromProto(RoomBacklog b) {
        return new RoomMetrics.Backlog(b.getRoom(), b.getBacklog());
    }
}
