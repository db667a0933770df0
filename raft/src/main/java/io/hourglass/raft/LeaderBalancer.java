package io.hourglass.raft;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spreads a node's shard leaderships: each shard this node leads but another node should (shard i
 * prefers the (i mod voters)-th voter by id) is handed to that node once it is caught up and
 * answering, every {@link #BALANCE_EVERY_MS} (started by the host only with more than one shard) or
 * at once by hand. Holds still while the voters change (see {@link #membershipSettled}).
 */
final class LeaderBalancer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderBalancer.class);
    /** How often a leader looks whether a shard it leads belongs with another node. */
    static final long BALANCE_EVERY_MS = 5_000;
    /** How long a shard whose hand-over failed, or the voters after a change, are left alone. */
    static final long BALANCE_BACKOFF_MS = 30_000;

    private final String nodeId;
    private final Supplier<List<RaftNode>> replicas;
    private final BooleanSupplier closing;
    private final ScheduledExecutorService executor;
    /** When each shard's last failed hand-over was, so a failing one is not retried on every pass. */
    private final Map<Integer, Long> lastFailedBalanceMs = new ConcurrentHashMap<>();
    /** Membership changes running on this node now. */
    private final AtomicInteger membershipChanges = new AtomicInteger();
    private volatile long lastMembershipChangeMs;

    LeaderBalancer(String nodeId, Supplier<List<RaftNode>> replicas, BooleanSupplier closing) {
        this.nodeId = nodeId;
        this.replicas = replicas;
        this.closing = closing;
        this.executor = Daemons.scheduler("hourglass-leader-balancer-" + nodeId);
    }

    /**
     * The node that should lead {@code shard}: the voters sorted by id, shard {@code i} to the
     * {@code i % voters}-th, so N shards on M nodes give each node N/M leaderships (rounded).
     */
    static String preferredLeader(int shard, List<String> voterIds) {
        List<String> sorted = voterIds.stream().sorted().toList();
        return sorted.isEmpty() ? null : sorted.get(shard % sorted.size());
    }

    void start() {
        executor.scheduleWithFixedDelay(this::balanceQuietly, BALANCE_EVERY_MS, BALANCE_EVERY_MS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    /** A membership change starts on this node: no moves until it ends and {@link #BALANCE_BACKOFF_MS} after. */
    void changeStarted() {
        membershipChanges.incrementAndGet();
    }

    void changeEnded() {
        lastMembershipChangeMs = System.currentTimeMillis();
        membershipChanges.decrementAndGet();
    }

    private void balanceQuietly() {
        try {
            rebalance();
        } catch (RuntimeException e) {
            LOG.warn("{}: spreading the shard leaderships failed: {}", nodeId, e.toString());
        }
    }

    /**
     * One pass of the leadership spread: each shard this node leads but another node should (see
     * {@link #preferredLeader}) is handed to that node, when it is caught up and answering; returns
     * the shards handed over. A shard whose hand-over failed is left alone for
     * {@link #BALANCE_BACKOFF_MS} by the periodic pass (not by a pass asked for by hand).
     */
    public List<RaftHost.Move> rebalance() {
        return rebalance(false);
    }

    private synchronized List<RaftHost.Move> rebalance(boolean ignoreBackoff) {
        List<RaftHost.Move> moved = new ArrayList<>();
        List<RaftNode> replicas = this.replicas.get();
        if (closing.getAsBoolean() || replicas.size() < 2 || !membershipSettled(replicas, ignoreBackoff)) {
            return moved;
        }
        for (RaftNode r : replicas) {
            if (r == null || !r.isLeader()) {
                continue;
            }
            int shard = r.shardIndex();
            long now = System.currentTimeMillis();
            if (!ignoreBackoff && now - lastFailedBalanceMs.getOrDefault(shard, 0L) < BALANCE_BACKOFF_MS) {
                continue;
            }
            String preferred = preferredLeader(shard, r.handOver().voterIds());
            if (preferred == null || preferred.equals(nodeId)) {
                continue;
            }
            if (r.handOver().to(preferred, "spreading the shard leaderships")) {
                moved.add(new RaftHost.Move(shard, nodeId, preferred));
            } else {
                lastFailedBalanceMs.put(shard, now);
            }
        }
        return moved;
    }

    /**
     * Whether the voters hold still: no membership change runs on this node or ended here within
     * {@link #BALANCE_BACKOFF_MS} (unless asked by hand), and every shard has the same voters (a
     * change another node drives shows as shards that differ). A leadership moved while a group
     * changes its configuration makes the change fail (Ratis: reconfiguration in progress).
     */
    private boolean membershipSettled(List<RaftNode> replicas, boolean byHand) {
        if (membershipChanges.get() > 0
                || !byHand && System.currentTimeMillis() - lastMembershipChangeMs < BALANCE_BACKOFF_MS) {
            return false;
        }
        Set<String> first = null;
        for (RaftNode r : replicas) {
            Set<String> voters = new HashSet<>(r.handOver().voterIds());
            if (first == null) {
                first = voters;
            } else if (!first.equals(voters)) {
                return false;
            }
        }
        return true;
    }

    /** A pass of {@link #rebalance()} asked for by an operator: failed shards are tried again at once. */
    public List<RaftHost.Move> rebalanceNow() {
        return rebalance(true);
    }
}
