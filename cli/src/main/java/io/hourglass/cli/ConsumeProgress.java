package io.hourglass.cli;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
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

    /** How often the waiting thread looks whether the stream is up (no event for it). */
    private static final long NOT_WORKING_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

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
     * Waits until the limit is reached, {@code idleTimeout} passes without a delivery while
     * {@code working} (null timeout = wait forever), or the subscription ends. The idle clock
     * restarts while the stream is not working (connecting, reconnecting), so {@code --timeout}
     * never turns a subscription that could not start into a clean exit.
     *
     * @throws Exception the failure passed to {@link #end}
     */
    Outcome await(Duration idleTimeout, BooleanSupplier working) throws Exception {
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
                long now = System.nanoTime();
                if (!working.getAsBoolean()) {
                    lastActivity = now;
                    changed.await(Math.min(idleTimeout.toNanos(), NOT_WORKING_POLL_NANOS), TimeUnit.NANOSECONDS);
                    continue;
                }
                long left = lastActivity + idleTimeout.toNanos() - now;
                if (left <= 0) {
                    return Outcome.IDLE;
                }
                changed.await(Math.min(left, NOT_WORKING_POLL_NANOS), TimeUnit.NANOSECONDS);
            }
        } finally {
            lock.unlock();
        }
    }

    /** {@link #await(Duration, BooleanSupplier)} for a stream that is always working. */
    Outcome await(Duration idleTimeout) throws Exception {
        return await(idleTimeout, () -> true);
    }

    /**
     * Stops claiming deliveries and waits up to {@code max} for the handler to finish the ones it
     * already claimed, so that what it settles afterwards cannot be missed by the caller.
     */
    void stopClaiming(Duration max) throws InterruptedException {
        lock.lock();
        try {
            ended = true;
            long deadline = System.nanoTime() + max.toNanos();
            while (handled < claimed && failure == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                changed.await(left, TimeUnit.NANOSECONDS);
            }
        } finally {
            lock.unlock();
        }
    }

    /** The failure passed to {@link #end}, or null. */
    Throwable failure() {
        lock.lock();
        try {
            return failure;
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
