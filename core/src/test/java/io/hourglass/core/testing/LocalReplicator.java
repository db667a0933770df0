package io.hourglass.core.testing;

import io.hourglass.core.UnavailableException;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.storage.TermIndex;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Replication for unit tests of the core: stamps the clock's time and applies at once, like a
 * leader of a group of one. Can be told to fail the next proposals, and records what it applied.
 */
public final class LocalReplicator implements Replicator {
    private final StateApplier applier;
    private final Clock clock;
    private final List<Command> proposed = new ArrayList<>();
    private long index;
    /** The term entries are appended in: a new leader's, after {@link #newTerm()}. */
    private long term = 1;
    private int failNext;
    private int failed;
    private long stampLagMs;

    public LocalReplicator(StateApplier applier, Clock clock) {
        this.applier = applier;
        this.clock = clock;
        this.index = Math.max(0, applier.store().appliedIndex().index());
    }

    /** The term this leader appends entries in. */
    public synchronized long term() {
        return term;
    }

    /**
     * Another leader took over: later entries, a deferred one included (a proposal the old leader
     * forwarded to it), are appended in the next term.
     */
    public synchronized long newTerm() {
        return ++term;
    }

    public synchronized void failNext(int n) {
        failNext = n;
    }

    /** How many proposals {@link #failNext} has failed so far. */
    public synchronized int failedSoFar() {
        return failed;
    }

    /**
     * Stamps later proposals {@code lag} before the clock's time: a leader stamps a command before
     * replicating it, so the entry is applied after its stamp (a dispatcher pass may run between).
     */
    public synchronized void stampLag(java.time.Duration lag) {
        stampLagMs = lag.toMillis();
    }

    private boolean deferNext;
    private Command deferred;
    private CompletableFuture<CommandReply> deferredReply;

    /** Holds the next proposal uncommitted until {@link #commitDeferred()}: a slow round through Raft. */
    public synchronized void deferNext() {
        deferNext = true;
    }

    /** Applies the proposal {@link #deferNext()} held, and completes its future. */
    public synchronized void commitDeferred() {
        proposed.add(deferred);
        deferredReply.complete(applier.apply(deferred, new TermIndex(term, ++index)).reply());
        deferred = null;
    }

    /** Fails the proposal {@link #deferNext()} held: it never commits. */
    public synchronized void failDeferred() {
        deferredReply.completeExceptionally(new UnavailableException("injected failure", null));
        deferred = null;
    }

    public synchronized List<Command> proposed() {
        return List.copyOf(proposed);
    }

    @Override
    public synchronized CompletableFuture<CommandReply> propose(Command command) {
        if (failNext > 0) {
            failNext--;
            failed++;
            return CompletableFuture.failedFuture(new UnavailableException("injected failure", null));
        }
        Command stamped = command.toBuilder().setStampedAtMs(clock.millis() - stampLagMs).build();
        if (deferNext) {
            deferNext = false;
            deferred = stamped;
            deferredReply = new CompletableFuture<>();
            return deferredReply;
        }
        proposed.add(stamped);
        return CompletableFuture.completedFuture(applier.apply(stamped, new TermIndex(term, ++index)).reply());
    }

    private volatile boolean leader = true;
    private volatile String hint;

    /** What {@link #isLeader()} and {@link #leaderHint()} answer (by default: leading, no hint). */
    public void role(boolean leading, String leaderHint) {
        leader = leading;
        hint = leaderHint;
    }

    @Override
    public boolean isLeader() {
        return leader;
    }

    @Override
    public String leaderHint() {
        return hint;
    }

    private volatile boolean lease = true;

    /** Whether {@link #holdsLease()} answers yes (a leader that lost touch with its majority: no). */
    public void lease(boolean held) {
        lease = held;
    }

    @Override
    public boolean holdsLease() {
        return lease;
    }
}
