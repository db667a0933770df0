package io.hourglass.client;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A room's state as {@link RoomClient#state} reads it from the room's leader.
 *
 * @param room the room
 * @param backlog pending messages, the in-flight one excluded
 * @param members the SYNC members
 * @param listeners the number of ASYNC subscriptions
 * @param inFlight the id of the released message awaiting acks, empty when none
 * @param atLeastOnce whether the in-flight message survives a failover
 * @param ackTimeout the room's ack timeout, {@link Duration#ZERO} when none
 * @param recovering after a failover: the surviving backlog waits for the members to resubscribe
 */
public record RoomStatus(String room, long backlog, List<Member> members, int listeners,
                         String inFlight, boolean atLeastOnce, Duration ackTimeout,
                         boolean recovering) {
    /**
     * One SYNC member.
     *
     * @param clientId the member's session
     * @param lastSeenMs its last ping, ack, subscribe or send, epoch milliseconds
     * @param ready whether it has acked the in-flight message (or joined since it was released)
     */
    public record Member(String clientId, long lastSeenMs, boolean ready) {
        public Member {
            Objects.requireNonNull(clientId, "clientId");
        }
    }

    public RoomStatus {
        Objects.requireNonNull(room, "room");
        members = List.copyOf(members);
        Objects.requireNonNull(inFlight, "inFlight");
        Objects.requireNonNull(ackTimeout, "ackTimeout");
    }
}
