package io.hourglass.cli;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * When {@code hourglass consume} stops: after {@code limit} deliveries, after an idle period
 * without one, or when the subscription failed. The handler thread reports; the command's main
 * thread waits. All state is guarded by {@code lock}.
 */
final class ConsumeProgress {
    /** Why waiting ended. */
    enum Outcome { COUNT_REACHED, IDLE, ENDED }

    private final int limit;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    // Guarded by lock.
    private int claimed;
    private int handled;
    private long lastActivity = System.nanoTime();
    private Throwable failure;
    private boolean ended;

    /** @param limit deliveries to handle, or 0 for no limit */
    ConsumeProgress(int limit) {
        this.limit = limit;
    }

    /** Reserves the next delivery; false once {@code limit} deliveries have been reserved. */
    boolean claim() {
        lock.lock();
        try {
            if (failure != null || ended || (limit > 0 && claimed >= limit)) {
                return false;
            }
            claimed++;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** A claimed delivery has been printed and settled. */
    void handled() {
        lock.lock();
        try {
            handled++;
            lastActivity = System.nanoTime();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Stops waiting with {@code cause} (rethrown by {@link #await}), or cleanly if null. */
    void end(Throwable cause) {
        lock.lock();
        try {
            if (cause != null && failure == null) {
                failure = cause;
            }
            ended = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until the limit is reached, {@code idleTimeout} passes without a delivery (null =
     * wait forever), or the subscription ends.
     *
     * @throws Exception the failure passed to {@link #end}
     */
    Outcome await(Duration idleTimeout) throws Exception {
        lock.lock();
        try {
            while (true) {
                if (failure != null) {
                    throw failure instanceof Exception e ? e : new RuntimeException(failure);
                }
                if (limit > 0 && handled >= limit) {
                    return Outcome.COUNT_REACHED;
                }
                if (ended) {
                    return Outcome.ENDED;
                }
                if (idleTimeout == null) {
                    changed.await();
                    continue;
                }
                long left = lastActivity + idleTimeout.toNanos() - System.nanoTime();
                if (left <= 0) {
                    return Outcome.IDLE;
                }
                changed.await(left, TimeUnit.NANOSECONDS);
            }
        } finally {
            lock.unlock();
        }
    }

    int handledCount() {
        lock.lock();
        try {
            return handled;
        } finally {
            lock.unlock();
        }
    }
}
