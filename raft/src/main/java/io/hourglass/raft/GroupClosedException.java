package io.hourglass.raft;

/**
 * Why a node stops whose store is fine: Ratis closed one of its Raft groups while it ran (its leader
 * evicted it, or the division failed), so the node can no longer serve that group's data.
 */
public final class GroupClosedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    GroupClosedException(String message) {
        super(message);
    }
}
