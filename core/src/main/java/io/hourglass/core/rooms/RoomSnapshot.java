package io.hourglass.core.rooms;

import java.util.List;
import java.util.Optional;

/**
 * The state of one room on its leader, as {@link RoomEngine#state} answers it.
 *
 * @param backlog pending messages, excluding the one in flight
 * @param members S, in join order, each with its last-seen time and whether it is in R
 * @param listeners async subscribers
 * @param inFlightId the message whose acks the room waits for, if any
 * @param recovering a surviving backlog is kept for members to resubscribe after a failover
 * @param barrierCounts how long the room's barriers took on this leader, per bucket of
 *        {@link BarrierLatency#boundsMs()} (the overflow last); all zero when none completed here
 */
public record RoomSnapshot(String room, RoomSettings settings, int backlog, List<Member> members,
                           List<ClientId> listeners, Optional<String> inFlightId, boolean recovering,
                           long[] barrierCounts) {
    public RoomSnapshot {
        members = List.copyOf(members);
        listeners = List.copyOf(listeners);
        barrierCounts = barrierCounts.clone();
    }

    public RoomSnapshot(String room, RoomSettings settings, int backlog, List<Member> members,
                        List<ClientId> listeners, Optional<String> inFlightId, boolean recovering) {
        this(room, settings, backlog, members, listeners, inFlightId, recovering,
                new long[BarrierLatency.boundsMs().length + 1]);
    }

    /** A copy of the counts (the record keeps its own). */
    @Override
    public long[] barrierCounts() {
        return barrierCounts.clone();
    }

    /** A sync member. */
    public record Member(ClientId clientId, long lastSeenMs, boolean ready) {
    }

    /** R: the members ready for the next message. */
    public List<ClientId> ready() {
        return members.stream().filter(Member::ready).map(Member::clientId).toList();
    }
}
