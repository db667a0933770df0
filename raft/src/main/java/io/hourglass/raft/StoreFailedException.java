package io.hourglass.raft;

/**
 * Why an entry was not applied: this node's store failed (see {@link FailStop}). It reaches a
 * proposer inside Ratis' StateMachineException, and {@link Proposer} answers UNAVAILABLE — the
 * request was fine, this node is not.
 */
final class StoreFailedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StoreFailedException(String message) {
        super(message);
    }
}
