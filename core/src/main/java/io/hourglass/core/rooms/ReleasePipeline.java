package io.hourglass.core.rooms;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.RoomCommand;
import io.hourglass.core.proto.RoomReleaseCmd;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * One room's gate decisions on their way through replication, in decision order. Only the head
 * step is ever proposed; the next one waits until the head's entry has been applied on this node,
 * so replication cannot reorder releases and a released message is never overtaken. A failed
 * proposal is proposed again with the same ticket, and whichever attempt is applied first resolves
 * the step; a later one finds its ticket gone and changes nothing the engine acts on.
 *
 * <p>Consecutive flushes (messages for async listeners of a room without sync members) that are not
 * proposed yet share one entry, up to {@link #MAX_KEYS_PER_ENTRY} keys.
 *
 * <p>Engine thread only.
 */
final class ReleasePipeline {
    static final int MAX_KEYS_PER_ENTRY = 1024;

    /** One replicated entry: one decision, or several flushes. */
    static final class Step {
        final long ticket;
        final List<GateAction> actions = new ArrayList<>();
        private int keys;
        private boolean proposed;

        Step(long ticket, GateAction first) {
            this.ticket = ticket;
            add(first);
        }

        private void add(GateAction a) {
            actions.add(a);
            keys += a instanceof GateAction.Flush f ? f.messages().size() : 1;
        }

        boolean proposed() {
            return proposed;
        }

        /** @param reign the leadership deciding it, so that no other term's entry, nor a fenced-off one, applies it */
        Command toCommand(String room, Reign reign) {
            RoomReleaseCmd.Builder b = RoomReleaseCmd.newBuilder().setTicket(ticket).setLeaderTerm(reign.term())
                    .setIncarnation(reign.incarnation());
            String settles = null;
            for (GateAction a : actions) {
                if (a instanceof GateAction.Release r) {
                    b.addKeys(ByteString.copyFrom(r.message().key().toBytes())).setAwaitAcks(true);
                    r.holders().forEach(h -> b.addHolders(h.value()));
                } else if (a instanceof GateAction.Flush f) {
                    f.messages().forEach(m -> b.addKeys(ByteString.copyFrom(m.key().toBytes())));
                    if (settles == null && f.settles() != null) {
                        settles = f.settles().id();
                    }
                } else if (a instanceof GateAction.Settle s && settles == null && s.message() != null) {
                    settles = s.message().id();
                }
            }
            if (settles != null) {
                b.setSettles(settles);
            }
            return Command.newBuilder().setRoom(RoomCommand.newBuilder().setRoom(room).setRelease(b)).build();
        }
    }

    private final Deque<Step> steps = new ArrayDeque<>();

    /** Queues a decision; returns the step that carries it. */
    Step add(GateAction action, LongSupplier tickets) {
        Step tail = steps.peekLast();
        if (tail != null && !tail.proposed && action instanceof GateAction.Flush f
                && tail.actions.stream().allMatch(a -> a instanceof GateAction.Flush)
                && tail.keys + f.messages().size() <= MAX_KEYS_PER_ENTRY) {
            tail.add(action);
            return tail;
        }
        Step step = new Step(tickets.getAsLong(), action);
        steps.addLast(step);
        return step;
    }

    /** The head step if it should be proposed now (not proposed, or its last attempt failed); marks it proposed. */
    Optional<Step> takeProposal() {
        Step head = steps.peekFirst();
        if (head == null || head.proposed) {
            return Optional.empty();
        }
        head.proposed = true;
        return Optional.of(head);
    }

    /** The head step's entry with this ticket was applied: removes and returns it. */
    Optional<Step> resolve(long ticket) {
        Step head = steps.peekFirst();
        if (head == null || head.ticket != ticket) {
            return Optional.empty();
        }
        steps.removeFirst();
        return Optional.of(head);
    }

    /** A proposal of the head failed: it will be proposed again by the next {@link #takeProposal()}. */
    boolean failed(long ticket) {
        Step head = steps.peekFirst();
        if (head == null || head.ticket != ticket || !head.proposed) {
            return false;
        }
        head.proposed = false;
        return true;
    }

    boolean isEmpty() {
        return steps.isEmpty();
    }
}
