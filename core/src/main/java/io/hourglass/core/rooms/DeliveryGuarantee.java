package io.hourglass.core.rooms;

import io.hourglass.core.proto.RoomGuarantee;

/** What a room promises about a released message when the leader fails over. */
public enum DeliveryGuarantee {
    /** The default, like the original: a released message is deleted and never delivered twice. */
    AT_MOST_ONCE,
    /** The in-flight message stays replicated until every sync member acked it; a new leader redelivers it. */
    AT_LEAST_ONCE;

    static DeliveryGuarantee fromProto(RoomGuarantee g) {
        return g == RoomGuarantee.ROOM_AT_LEAST_ONCE ? AT_LEAST_ONCE : AT_MOST_ONCE;
    }

    RoomGuarantee toProto() {
        return this == AT_LEAST_ONCE ? RoomGuarantee.ROOM_AT_LEAST_ONCE : RoomGuarantee.ROOM_AT_MOST_ONCE;
    }
}
