package io.hourglass.core.rooms;

import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.proto.RoomConfigureCmd;
import io.hourglass.core.proto.StoredRoom;
import java.time.Duration;
import java.util.Objects;

/**
 * Replicated settings of one room.
 *
 * @param guarantee at most once (default) or at least once
 * @param ackTimeout how long a sync member may hold the in-flight message unacked before it is
 *        evicted; {@link Duration#ZERO} (default) means never — a live member that never acks blocks the room
 */
public record RoomSettings(DeliveryGuarantee guarantee, Duration ackTimeout) {
    public static final RoomSettings DEFAULT = new RoomSettings(DeliveryGuarantee.AT_MOST_ONCE, Duration.ZERO);
    /** The shortest ack timeout a room may have, when it has one. */
    public static final Duration MIN_ACK_TIMEOUT = Duration.ofSeconds(1);

    /** @throws InvalidRequestException when the ack timeout is negative or positive but under 1s */
    public RoomSettings {
        Objects.requireNonNull(guarantee, "guarantee");
        Objects.requireNonNull(ackTimeout, "ackTimeout");
        if (ackTimeout.isNegative() || (!ackTimeout.isZero() && ackTimeout.compareTo(MIN_ACK_TIMEOUT) < 0)) {
            throw new InvalidRequestException("a room's ack timeout must be 0 (none) or at least 1s, got "
                    + ackTimeout.toMillis() + "ms");
        }
    }

    public boolean hasAckTimeout() {
        return !ackTimeout.isZero();
    }

    static RoomSettings of(StoredRoom stored) {
        return new RoomSettings(DeliveryGuarantee.fromProto(stored.getGuarantee()),
                Duration.ofMillis(stored.getAckTimeoutMs()));
    }

    RoomConfigureCmd toCommand() {
        return RoomConfigureCmd.newBuilder().setGuarantee(guarantee.toProto()).setAckTimeoutMs(ackTimeout.toMillis())
                .build();
    }
}
