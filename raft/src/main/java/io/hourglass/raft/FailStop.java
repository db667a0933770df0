package io.hourglass.raft;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
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
 * <p>Thread-safe: one atomic reference.
 */
final class FailStop {
    private static final Logger LOG = LoggerFactory.getLogger(FailStop.class);

    private final String nodeId;
    private final AtomicReference<Throwable> cause = new AtomicReference<>();
    private final Consumer<Throwable> stop;

    /** @param stop what stops the node; runs once, on its own thread, after the first failure */
    FailStop(String nodeId, Consumer<Throwable> stop) {
        this.nodeId = nodeId;
        this.stop = stop;
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
        LOG.error("{}: {} failed; stopping this node's Raft server rather than go on without it", nodeId, what, failure);
        Thread stopper = new Thread(() -> stop.accept(failure), "hourglass-fail-stop-" + nodeId);
        stopper.setDaemon(true);
        stopper.start();
        return true;
    }

    boolean tripped() {
        return cause.get() != null;
    }

    /** The failure that stopped the node, if one did. */
    Optional<Throwable> cause() {
        return Optional.ofNullable(cause.get());
    }
}
