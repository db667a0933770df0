package io.hourglass.raft;

import java.util.Objects;
import java.util.Optional;

/**
 * Turns Ratis' leadership callbacks into {@link Leadership} changes, dropping the ones that arrive
 * stale. Pure logic, no threads: {@link LeadershipNotifier} owns one and calls it from its own
 * thread only.
 *
 * <p>Ratis reports leadership from several threads: a new leader and a step-down from the server
 * (under its lock, so in the order they happened), leader-ready from the apply thread. So a
 * leader-ready may be seen after the step-down that followed it. Each callback is therefore
 * placed by (term, phase), with the phases of one term in the only order they can happen — leader
 * unknown, leader known (maybe this node, not ready yet), leading, deposed — and one that is not
 * after the current position is stale and ignored. Raft gives a term at most one leader, and a
 * deposed leader can only lead again in a later term, so nothing newer is ever dropped.
 */
final class LeadershipTracker {
    /** The phases of one term, in the order they can happen. */
    private enum Phase { UNKNOWN, FOLLOWING, LEADING, DEPOSED }

    private final String selfId;
    private long term;
    private Phase phase = Phase.UNKNOWN;
    /** The last change handed out; a move that changes nothing visible publishes nothing. */
    private Leadership published = Leadership.NONE;

    LeadershipTracker(String selfId) {
        this.selfId = Objects.requireNonNull(selfId);
    }

    /**
     * Ratis learned the leader of {@code term} (possibly this node, not ready to lead yet). A
     * negative term means "the current one" (it could not be read).
     */
    Optional<Leadership> leaderChanged(long term, String leader) {
        return move(known(term), Phase.FOLLOWING, Objects.requireNonNull(leader));
    }

    /** This node, leader of {@code term}, applied the first entry of that term. */
    Optional<Leadership> ready(long term) {
        return move(known(term), Phase.LEADING, selfId);
    }

    /**
     * This node stopped leading (or closes). {@code term} is the term Ratis is at by then: a higher
     * one than the current when a newer leader deposed this one, whose leader is not known yet.
     */
    Optional<Leadership> steppedDown(long term) {
        long at = known(term);
        return at > this.term ? move(at, Phase.UNKNOWN, null) : move(this.term, Phase.DEPOSED, null);
    }

    private long known(long reported) {
        return reported < 0 ? term : reported;
    }

    private Optional<Leadership> move(long toTerm, Phase toPhase, String toLeader) {
        boolean newer = toTerm > term || (toTerm == term && toPhase.compareTo(phase) > 0);
        if (!newer) {
            return Optional.empty();
        }
        term = toTerm;
        phase = toPhase;
        boolean leading = toPhase == Phase.LEADING;
        if (published.term() == toTerm && published.leading() == leading && Objects.equals(published.leaderId(), toLeader)) {
            return Optional.empty();
        }
        published = new Leadership(published.epoch() + 1, toTerm, leading, toLeader);
        return Optional.of(published);
    }
}
