package io.hourglass.raft;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes this node's {@link Leadership} changes to its listeners: Ratis' callbacks (from any
 * thread) are queued, and one thread of its own feeds them to a {@link LeadershipTracker} and
 * hands each change it yields to every listener in registration order. So listeners hear of
 * each change once, in epoch order, never concurrently, and never from a Ratis thread (which must
 * not block).
 *
 * <p>{@link #current()} is the last published change; it is set before the listeners run, so a
 * listener that asks the node whether it leads gets the answer it is being told.
 */
final class LeadershipNotifier implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeadershipNotifier.class);

    private final String nodeId;
    /** Used by the notifier thread only. */
    private final LeadershipTracker tracker;
    private final List<LeadershipListener> listeners = new CopyOnWriteArrayList<>();
    private final ExecutorService thread;
    private volatile Leadership current = Leadership.NONE;

    LeadershipNotifier(String nodeId) {
        this.nodeId = nodeId;
        this.tracker = new LeadershipTracker(nodeId);
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "hourglass-leadership-" + nodeId);
            t.setDaemon(true);
            return t;
        });
    }

    void addListener(LeadershipListener listener) {
        listeners.add(listener);
    }

    Leadership current() {
        return current;
    }

    /** Ratis named the leader of {@code term} (negative: the term could not be read). */
    void leaderChanged(long term, String leaderId) {
        submit(() -> tracker.leaderChanged(term, leaderId));
    }

    /** This node, leader of {@code term}, has applied the first entry of its term. */
    void ready(long term) {
        submit(() -> tracker.ready(term));
    }

    /** This node stopped leading; Ratis is at {@code term} now (negative: unknown). */
    void steppedDown(long term) {
        submit(() -> tracker.steppedDown(term));
    }

    private void submit(Supplier<Optional<Leadership>> signal) {
        try {
            thread.execute(() -> signal.get().ifPresent(this::publish));
        } catch (RejectedExecutionException e) {
            LOG.debug("{}: leadership signal after close ignored", nodeId);
        }
    }

    private void publish(Leadership change) {
        current = change;
        if (change.leading()) {
            LOG.info("{}: leading in term {} (epoch {})", nodeId, change.term(), change.epoch());
        } else {
            LOG.info("{}: not leading in term {}, leader {} (epoch {})", nodeId, change.term(),
                    change.leaderId() == null ? "unknown" : change.leaderId(), change.epoch());
        }
        for (LeadershipListener listener : listeners) {
            try {
                listener.onLeadership(change);
            } catch (RuntimeException e) {
                LOG.warn("{}: leadership listener {} failed on {}", nodeId, listener, change, e);
            }
        }
    }

    /**
     * Tells the listeners this node no longer leads (if it did), after every change queued before,
     * then stops the thread.
     */
    @Override
    public void close() {
        steppedDown(-1);
        thread.shutdown();
        try {
            if (!thread.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("{}: leadership listeners still busy after 10 s; not waiting for them", nodeId);
                thread.shutdownNow();
            }
        } catch (InterruptedException e) {
            thread.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
