package io.hourglass.raft;

import io.hourglass.raft.disk.DiskFullException;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's reaction to a failed store: the first failure is logged once, at ERROR, and stops
 * the node ({@code stop}, on a thread of its own); every later one is only counted as "already
 * failed" by the caller. Carrying on would apply later entries to a store that lost earlier ones.
 *
 * <p>Why not throw and let Ratis close the server? Ratis' apply thread (StateMachineUpdater, read
 * in 3.2.2 and checked in 3.3.0) marks itself failed on an exception and asks the server to close,
 * but leaves its loop only through a close that starts afterwards. When a close is already under
 * way it loops on: it retries the stop-time snapshot at every turn — a node whose data directory
 * vanished during shutdown logged "flush failed" until its disk was full — or, after a failed
 * apply, spins and never lets the close finish. So after a failure the state machine answers
 * calmly (failed futures, no snapshot), and this stops the server, whose close then completes.
 *
 * <p>A full disk is said so in that one ERROR, with the directory and its free space (see
 * {@code io.hourglass.raft.disk.FreeSpace}); the node's stop for a lack of space is a
 * {@link DiskFullException}, logged without a stack trace.
 *
 * <p>Thread-safe: atomic references.
 */
final class FailStop {
    private static final Logger LOG = LoggerFactory.getLogger(FailStop.class);

    private final String nodeId;
    private final AtomicReference<Throwable> cause = new AtomicReference<>();
    private final AtomicReference<String> reason = new AtomicReference<>();
    private final Consumer<Throwable> stop;
    private final Function<Throwable, String> explain;
    private final java.util.List<Consumer<Throwable>> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * @param stop what stops the node; runs once, on its own thread, after the first failure
     * @param explain what to add to the report of a failure ("; the disk is full: …", or "")
     */
    FailStop(String nodeId, Consumer<Throwable> stop, Function<Throwable, String> explain) {
        this.nodeId = nodeId;
        this.stop = stop;
        this.explain = explain;
    }

    /** @param stop see {@link #FailStop(String, Consumer, Function)}; failures get no explanation */
    FailStop(String nodeId, Consumer<Throwable> stop) {
        this(nodeId, stop, failure -> "");
    }

    /**
     * Records a store failure. The first one logs an ERROR and starts stopping the node; returns
     * whether this call was the first.
     */
    boolean trip(String what, Throwable failure) {
        if (!cause.compareAndSet(null, failure)) {
            LOG.debug("{}: {} failed after the store had failed: {}", nodeId, what, failure.toString());
            return false;
        }
        if (failure instanceof DiskFullException) {
            reason.set(failure.getMessage());
            LOG.error("{}: {}", nodeId, failure.getMessage());
        } else {
            reason.set(what + " failed" + explain.apply(failure));
            LOG.error("{}: {}; stopping this node's Raft server rather than go on without it", nodeId, reason.get(),
                    failure);
        }
        Thread stopper = new Thread(() -> {
            stop.accept(failure);
            for (Consumer<Throwable> listener : listeners) {
                try {
                    listener.accept(failure);
                } catch (RuntimeException e) {
                    LOG.warn("{}: failure listener {} failed", nodeId, listener, e);
                }
            }
        }, "hourglass-fail-stop-" + nodeId);
        stopper.setDaemon(true);
        stopper.start();
        return true;
    }

    /** Registers what to do once the node has stopped; called on the stopping thread, after {@code stop}. */
    void addListener(Consumer<Throwable> listener) {
        listeners.add(listener);
    }

    boolean tripped() {
        return cause.get() != null;
    }

    /** Why the node stopped, for an operator or a client ("applying entry 1:5 failed; the disk is full: …"). */
    Optional<String> reason() {
        return Optional.ofNullable(reason.get());
    }

    /** The failure that stopped the node, if one did. */
    Optional<Throwable> cause() {
        return Optional.ofNullable(cause.get());
    }
}
