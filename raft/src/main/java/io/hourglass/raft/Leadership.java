package io.hourglass.raft;

/**
 * One change of this node's leadership, as {@link RaftNode} publishes it to its
 * {@link LeadershipListener}s.
 *
 * <p>{@code leading} is true only once this node leads <em>and</em> has applied the first entry
 * of its own term (Ratis' leader-ready), so everything committed before the term is in the store.
 * A node that won an election but is not ready yet is reported as {@code leading=false} with
 * itself as {@code leaderId}.
 *
 * @param epoch    strictly increasing per node, one per published change (0 = nothing published
 *                 yet); a listener that hands the event to another thread can drop one whose epoch
 *                 is older than the last it acted on
 * @param term     the Raft term the change belongs to; never decreases from one event to the next
 * @param leading  whether this node leads and is ready to serve as leader
 * @param leaderId the leader of {@code term} as this node knows it, or null when unknown
 */
public record Leadership(long epoch, long term, boolean leading, String leaderId) {
    /** The state before the first change: not leading, no leader known. */
    public static final Leadership NONE = new Leadership(0, 0, false, null);

    public Leadership {
        if (epoch < 0 || term < 0) {
            throw new IllegalArgumentException("epoch and term must not be negative: " + epoch + ", " + term);
        }
        if (leading && leaderId == null) {
            throw new IllegalArgumentException("a leading node names itself as the leader");
        }
    }
}
