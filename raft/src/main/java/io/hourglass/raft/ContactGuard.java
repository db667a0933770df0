package io.hourglass.raft;

import io.hourglass.core.UnavailableException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fails proposals fast on a node that is cut off, so that its clients publish through another
 * server within a second instead of after {@code raft.requestTimeout}.
 *
 * <p>A node is <em>in touch</em> while it leads and a majority (itself included) answered within
 * {@code bound}, or follows a leader it heard from within {@code bound}. Once it has been out of
 * touch for longer than {@code bound}, it checks whether it can reach a majority of the voters at
 * all (a TCP connection to their Raft ports, itself counted): if it can, a new leader is on its way
 * (the old one is paused, or gone) and proposals keep waiting for it; if it cannot, it is the one
 * cut off, so every proposal waiting on it fails with UNAVAILABLE (its connection to the leader may
 * hang for as long as the partition lasts) and new ones fail at once, until it is in touch again. A proposal failed this way may still commit if the partition heals;
 * that is no different from one that timed out, and the producer-id dedup makes the client's retry
 * through another server safe. A failover (about 100 ms when the leader's process died) stays well
 * inside {@code bound}, so proposals made meanwhile wait for the new leader instead of failing.
 */
final class ContactGuard implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ContactGuard.class);
    static final long TICK_MS = 100;

    private final String nodeId;
    private final Supplier<String> outOfTouchNow;
    private final BooleanSupplier majorityReachable;
    private final long boundNanos;
    private final LongSupplier nanoTime;
    private final Set<CompletableFuture<?>> pending = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService ticker;
    private volatile long lastInTouch;
    private volatile boolean everInTouch;
    /** Why proposals fail at once, or null while in touch. */
    private volatile String refusal;
    /** Told true when this node finds itself cut off, false when it is in touch again (ticker thread). */
    private final java.util.List<java.util.function.Consumer<Boolean>> cutOffListeners =
            new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * @param outOfTouchNow why this node is not in touch at this moment (see above), or null
     * @param majorityReachable whether a majority of the voters, this node included, accept a TCP
     *        connection on their Raft ports (asked only while out of touch past the bound)
     */
    ContactGuard(String nodeId, Supplier<String> outOfTouchNow, BooleanSupplier majorityReachable, Duration bound,
                 LongSupplier nanoTime, boolean tick) {
        this.nodeId = nodeId;
        this.outOfTouchNow = outOfTouchNow;
        this.majorityReachable = majorityReachable;
        this.boundNanos = bound.toNanos();
        this.nanoTime = nanoTime;
        this.lastInTouch = nanoTime.getAsLong();
        this.ticker = tick ? Daemons.scheduler("hourglass-contact-" + nodeId) : null;
    }

    /**
     * The guard of a node with this group view: out of touch after no answer from its leader (or,
     * leading, from a majority) for 1/4 of {@code raft.electionTimeoutMin}, for another 9/20 of it,
     * it probes the voters for 1/10 of it (at least 50 ms): about 0.8 s with the defaults before a
     * cut-off node refuses.
     */
    static ContactGuard of(RaftConfig config, GroupView view) {
        long timeoutMin = config.electionTimeoutMin().toMillis();
        int probeMs = (int) Math.max(50, timeoutMin / 10);
        return new ContactGuard(config.nodeId(), () -> view.outOfTouch(timeoutMin / 4),
                () -> view.majorityReachable(probeMs), Duration.ofMillis(timeoutMin * 9 / 20), System::nanoTime, true);
    }

    void start() {
        if (ticker != null) {
            ticker.scheduleWithFixedDelay(this::tick, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
        }
    }

    void addCutOffListener(java.util.function.Consumer<Boolean> listener) {
        cutOffListeners.add(listener);
    }

    private void cutOff(boolean value) {
        for (var l : cutOffListeners) {
            try {
                l.accept(value);
            } catch (RuntimeException e) {
                LOG.warn("{}: a cut-off listener failed", nodeId, e);
            }
        }
    }

    /** Null when a proposal may go ahead, else the UNAVAILABLE it fails with at once. */
    UnavailableException refusal() {
        String r = refusal;
        return r == null ? null : new UnavailableException(r, null);
    }

    /** Tracks {@code proposal} until it completes, so that a cut-off node can fail it. */
    <T> CompletableFuture<T> track(CompletableFuture<T> proposal) {
        pending.add(proposal);
        proposal.whenComplete((r, e) -> pending.remove(proposal));
        return proposal;
    }

    /** One look: the ticker thread, or a test. */
    void tick() {
        try {
            String why = outOfTouchNow.get();
            long now = nanoTime.getAsLong();
            if (why == null) {
                lastInTouch = now;
                everInTouch = true;
                if (refusal != null) {
                    LOG.info("{}: in touch with a quorum again; proposals go ahead", nodeId);
                    refusal = null;
                    cutOff(false);
                }
                return;
            }
            long outMs = (now - lastInTouch) / 1_000_000;
            if (now - lastInTouch <= boundNanos) {
                return;
            }
            if (majorityReachable.getAsBoolean()) {
                if (refusal != null) {
                    LOG.info("{}: a majority is reachable again; proposals wait for the leader", nodeId);
                    refusal = null;
                    cutOff(false);
                }
                return; // an election will give the reachable majority a leader: wait for it
            }
            String text = nodeId + " is cut off (" + why + " for " + outMs
                    + " ms, and it reaches no majority of the voters): try another server";
            if (refusal == null) {
                // Before its first contact (a cold start, the others not up yet) this is no news.
                if (everInTouch) {
                    LOG.warn("{}: out of touch for {} ms ({}) and no majority reachable: failing {} waiting "
                            + "proposals and refusing new ones", nodeId, outMs, why, pending.size());
                } else {
                    LOG.info("{}: no quorum reachable yet ({}): refusing proposals until there is", nodeId, why);
                }
            }
            boolean news = refusal == null && everInTouch;
            refusal = text;
            if (news) {
                cutOff(true);
            }
            for (CompletableFuture<?> p : pending) {
                p.completeExceptionally(new UnavailableException(text, null));
            }
        } catch (RuntimeException e) {
            LOG.debug("{}: contact check failed", nodeId, e);
        }
    }

    @Override
    public void close() {
        if (ticker != null) {
            ticker.shutdownNow();
        }
    }
}
