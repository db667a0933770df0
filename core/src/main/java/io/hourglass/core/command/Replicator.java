package io.hourglass.core.command;

import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import java.util.concurrent.CompletableFuture;

/**
 * Replication as the core sees it. The real implementation proposes through Raft; unit tests of
 * the core use an in-memory one that applies at once.
 *
 * <p>{@code propose} completes once the command is committed and applied on this node, or
 * exceptionally with {@link io.hourglass.core.NotLeaderException},
 * {@link io.hourglass.core.UnavailableException} or {@link io.hourglass.core.InvalidRequestException}.
 * The leader stamps the time into the command; callers leave {@code stamped_at_ms} unset.
 */
public interface Replicator {
    CompletableFuture<CommandReply> propose(Command command);

    /** Whether this node currently leads the group that orders the commands. */
    boolean isLeader();

    /**
     * Whether this node leads and a majority has heard from it so recently that no other leader
     * can have been elected meanwhile. A deposed leader that has not noticed yet (partitioned,
     * paused) must not hand out messages another leader may already have seen acknowledged; a
     * leader whose clock is off the others' must not judge what is due by it.
     */
    default boolean holdsLease() {
        return isLeader();
    }

    /** The client address of the current leader, when known (for redirecting clients), else null. */
    default String leaderHint() {
        return null;
    }

    /**
     * The refusal of a request only a leading engine serves: names the leader, or none while this node
     * leads but the engine has not been told yet (a few ms after its election) — naming itself there
     * sent clients around the other servers first, hundreds of ms after a failover.
     */
    default io.hourglass.core.NotLeaderException notLeader() {
        return new io.hourglass.core.NotLeaderException(isLeader() ? null : leaderHint());
    }
}
