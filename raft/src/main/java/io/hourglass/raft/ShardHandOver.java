package io.hourglass.raft;

import java.io.IOException;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When one shard's replica gives its leadership away: to a caught-up node the balancer prefers,
 * off a node about to be removed, before this node closes, and while this node's clock is off.
 * Each is a Ratis leadership transfer through {@link Membership}; none throws.
 */
final class ShardHandOver {
    private static final Logger LOG = LoggerFactory.getLogger(ShardHandOver.class);

    private final RaftConfig config;
    private final int shard;
    private final Membership membership;
    private final GroupView view;
    private final Supplier<RaftNode.Status> status;
    private final BooleanSupplier leading;
    private final BooleanSupplier hostClosing;

    ShardHandOver(RaftConfig config, int shard, Membership membership, GroupView view,
                  Supplier<RaftNode.Status> status, BooleanSupplier leading, BooleanSupplier hostClosing) {
        this.config = config;
        this.shard = shard;
        this.membership = membership;
        this.view = view;
        this.status = status;
        this.leading = leading;
        this.hostClosing = hostClosing;
    }

    /** A leader whose clock is off hands its leadership over (each verdict of {@link ClockWatch} while skewed). */
    void whileSkewed() {
        if (!hostClosing.getAsBoolean() && leading.getAsBoolean()) {
            membership.handOver(status.get(), config.electionTimeoutMin().toMillis(), config.electionTimeoutMax(),
                    "clock off the others'");
        }
    }

    /** A leader about to close hands its leadership over first; see {@link Membership#handOver}. */
    void beforeClose() {
        if (!config.handOverTimeout().isZero() && !hostClosing.getAsBoolean() && leading.getAsBoolean()) {
            membership.handOver(status.get(), config.electionTimeoutMin().toMillis(), config.handOverTimeout(),
                    shard == 0 ? "closing" : "closing, shard " + shard);
        }
    }

    List<String> otherVoters() {
        return voterIds().stream().filter(id -> !id.equals(config.nodeId())).toList();
    }

    /** The ids of the voters of this shard's current configuration. */
    List<String> voterIds() {
        return view.peers().stream().map(p -> p.getId().toString()).toList();
    }

    /**
     * Hands this shard's leadership to {@code peerId} when it is caught up (applied all but
     * {@link RaftNode#READY_MAX_LAG} of the commit index) and answered within the minimum election
     * timeout; returns whether it leads now.
     */
    boolean to(String peerId, String why) {
        if (!Membership.caughtUp(status.get(), peerId, config.electionTimeoutMin().toMillis())) {
            return false;
        }
        try {
            membership.transferWithRetries(peerId, config.electionTimeoutMax());
            LOG.info("{}: {}: handed shard {}'s leadership to {}", config.nodeId(), why, shard, peerId);
            return true;
        } catch (IOException | RuntimeException e) {
            LOG.info("{}: {}: could not hand shard {}'s leadership to {}: {}", config.nodeId(), why, shard, peerId,
                    e.toString());
            return false;
        }
    }

    /**
     * Before {@code id} leaves this shard's group: when it leads the shard, its leadership goes to
     * another voter first (this node when it is one), so the group never commits a configuration
     * without its own leader. A transfer that fails is left to the removal (Ratis steps the leader down).
     */
    void offNode(String id) {
        if (!id.equals(status.get().leaderId())) {
            return;
        }
        String to = voterIds().stream().filter(v -> !v.equals(id)).sorted((a, b) -> a.equals(config.nodeId()) ? -1
                : b.equals(config.nodeId()) ? 1 : a.compareTo(b)).findFirst().orElse(null);
        if (to == null) {
            return;
        }
        try {
            membership.transferWithRetries(to, config.electionTimeoutMax().multipliedBy(2));
            LOG.info("{}: shard {}: moved the leadership from {} to {} before removing {}", config.nodeId(), shard, id, to, id);
        } catch (IOException | RuntimeException e) {
            LOG.warn("{}: shard {}: could not move the leadership off {} before removing it: {}", config.nodeId(), shard,
                    id, e.toString());
        }
    }
}
