package io.hourglass.core.rooms;

import java.util.List;
import java.util.Set;

/**
 * A decision of a {@link RoomGate}'s release rule. The gate has already moved on (the message left
 * pending, R was cleared); the engine replicates the decision and delivers once it is committed.
 */
sealed interface GateAction permits GateAction.Release, GateAction.Flush, GateAction.Settle {
    String room();

    /**
     * Rule 2: the head goes to every current subscriber and becomes the in-flight message.
     *
     * @param members the sync members at the decision (they receive it ackable)
     * @param listeners the async listeners at the decision
     * @param redelivery the message was in flight before a failover (at least once) and goes out again
     * @param holders the members' session ids, sorted, recorded with the in-flight message so that a
     *        future leader knows whom its failover hold waits for; empty when not known
     */
    record Release(String room, PendingMessage message, Set<ClientId> members, Set<ClientId> listeners,
                   boolean redelivery, List<SessionId> holders) implements GateAction {
        public Release {
            members = Set.copyOf(members);
            listeners = Set.copyOf(listeners);
            holders = List.copyOf(holders);
        }
    }

    /**
     * Rule 1: the room has no sync members; every pending message goes to the async listeners, in order.
     *
     * @param settles the in-flight message nobody is left to ack (its replicated record is cleared), or null
     * @param redeliveryFirst the first message is the at-least-once message in flight when this leader
     *        took over, going out again
     */
    record Flush(String room, List<PendingMessage> messages, Set<ClientId> listeners, PendingMessage settles,
                 boolean redeliveryFirst) implements GateAction {
        public Flush {
            messages = List.copyOf(messages);
            listeners = Set.copyOf(listeners);
        }
    }

    /** At least once: every sync member acked the in-flight message and nothing follows it; forget it. */
    record Settle(String room, PendingMessage message) implements GateAction {
    }
}
