package io.hourglass.raft;

/**
 * Told how long each successful proposal took, from {@link RaftNode#propose} until the command was
 * committed and applied on this node (metrics). Called on whichever thread completes the proposal;
 * it must be cheap and thread-safe.
 */
@FunctionalInterface
public interface ProposalObserver {
    /** An observer that records nothing. */
    ProposalObserver NONE = nanos -> { };

    void committed(long elapsedNanos);
}
