package io.hourglass.core.rooms;

import java.util.HashSet;
import java.util.Set;

/**
 * What a gate that a new leader rebuilt waits for before the ordinary lock-step rules apply again.
 * Membership is not replicated, so right after a failover the new leader cannot see who is still
 * on the way back; two holds bridge that:
 *
 * <ul>
 *   <li><b>backlog hold</b>: a room without sync members keeps a surviving backlog until the first
 *       sync member is back or the clock reaches {@code backlogUntilMs} ({@code rooms.resubscribeGrace}),
 *       instead of handing it to its async listeners (rule 1) before anyone could resubscribe;</li>
 *   <li><b>gate hold</b>: with a message in flight at the failover, nothing is released, members or
 *       not, until the clock reaches {@code gateUntilMs} (the client timeout, at most the grace) — or
 *       at once when every recorded holder of that message is back. The first member back cannot know
 *       whether others still hold the message; releasing the next one before they are back and have
 *       acked would break lock-step. The release entry recorded the holders' {@link SessionId}s, so
 *       the gate knows whom it waits for; a holder that resubscribes counts as back whether it still
 *       holds the message (it joins unready and the room waits for its ack) or not (it had acked). A
 *       holder that does not come back is waited for until {@code gateUntilMs}, as it would have had
 *       to ping within its client timeout anyway. Without recorded holders (older entries, a member
 *       without a session id) only the clock ends the hold.</li>
 * </ul>
 *
 * <p>Either hold, once over, stays over. Not thread-safe: part of its {@link RoomGate}.
 */
final class FailoverHold {
    private long backlogUntilMs;
    private long gateUntilMs;
    /**
     * Recorded holders of the in-flight message not back yet. The gate hold ends when the last one
     * is back; empty from the start means the holders are not known, and only the clock ends it.
     */
    private final Set<SessionId> awaited;

    private FailoverHold(long backlogUntilMs, long gateUntilMs, Set<SessionId> holders) {
        this.backlogUntilMs = backlogUntilMs;
        this.gateUntilMs = gateUntilMs;
        this.awaited = new HashSet<>(holders);
    }

    /** No hold: a gate this leader built itself. */
    static FailoverHold none() {
        return new FailoverHold(0, 0, Set.of());
    }

    /**
     * @param backlogUntilMs 0 for no backlog hold
     * @param gateUntilMs 0 for no gate hold
     * @param holders the recorded holders of the message in flight; empty when not known
     */
    static FailoverHold until(long backlogUntilMs, long gateUntilMs, Set<SessionId> holders) {
        return new FailoverHold(backlogUntilMs, gateUntilMs, gateUntilMs == 0 ? Set.of() : holders);
    }

    /**
     * A subscription was added. A sync member ends the backlog hold; a recorded holder is back (in
     * either mode: a listener does not gate the room), and the last one ends the gate hold.
     *
     * @return whether this ended the gate hold
     */
    boolean subscribed(SubscriptionMode mode, SessionId session) {
        if (mode == SubscriptionMode.SYNC) {
            backlogUntilMs = 0;
        }
        if (session != null && awaited.remove(session) && awaited.isEmpty() && gateUntilMs != 0) {
            gateUntilMs = 0;
            return true;
        }
        return false;
    }

    /** Whether the gate hold still forbids releasing; once the clock passed it, it is over for good. */
    boolean holdsGate(long nowMs) {
        if (nowMs < gateUntilMs) {
            return true;
        }
        gateUntilMs = 0;
        awaited.clear();
        return false;
    }

    /** Whether a room without sync members still keeps its backlog; once over, over for good. */
    boolean keepsBacklog(long nowMs) {
        if (nowMs < backlogUntilMs) {
            return true;
        }
        backlogUntilMs = 0;
        return false;
    }

    /** Whether either hold is on: the room is recovering from a failover. */
    boolean active(long nowMs) {
        return nowMs < backlogUntilMs || nowMs < gateUntilMs;
    }
}
