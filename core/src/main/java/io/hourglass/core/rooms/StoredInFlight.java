package io.hourglass.core.rooms;

import io.hourglass.core.proto.StoredRoom;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A room's replicated in-flight record as a new leader reads it ({@code StoredRoom.in_flight} and
 * its companions): the message, whether it was kept whole for an at-least-once redelivery, and the
 * session ids of its holders (empty when not known).
 */
record StoredInFlight(PendingMessage message, boolean whole, Set<SessionId> holders) {
    private static final Logger LOG = LoggerFactory.getLogger(StoredInFlight.class);

    StoredInFlight {
        holders = Set.copyOf(holders);
    }

    /** The room's in-flight record, or null when it has none (or its id is malformed). */
    static StoredInFlight of(StoredRoom stored) {
        if (!stored.hasInFlight()) {
            return null;
        }
        PendingMessage m = PendingMessage.of(stored.getInFlight()).orElse(null);
        return m == null ? null : new StoredInFlight(m, stored.getInFlightWhole(), holdersOf(stored));
    }

    /** The recorded holders; none (only the clock ends the hold) if any of them is malformed. */
    private static Set<SessionId> holdersOf(StoredRoom stored) {
        Set<SessionId> holders = new TreeSet<>();
        for (String s : stored.getHoldersList()) {
            try {
                holders.add(new SessionId(s));
            } catch (RuntimeException e) {
                LOG.warn("room '{}' records a malformed holder ({}); its failover hold waits the full time",
                        stored.getRoom(), e.getMessage());
                return Set.of();
            }
        }
        return holders;
    }
}
