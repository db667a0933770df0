package io.hourglass.server.grpc;

import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What bounds the long-lived streams of the client port: how long a stream may stay silent before its
 * first frame ({@code grpc.initTimeout}), and how many Subscribe consumers the node serves at once
 * ({@code grpc.maxConsumers}). Without the first, a client could hold streams (and their buffers) open
 * without ever saying what they are for; without the second, register consumers until the heap is gone.
 *
 * <p>Thread-safe: the consumer count is atomic; deadlines run on the given timer thread.
 */
public final class StreamLimits {
    private final ScheduledExecutorService timer;
    private final Duration initTimeout;
    private final int maxConsumers;
    private final Duration electionWait;
    private final AtomicInteger consumers = new AtomicInteger();

    /**
     * @param electionWait how long a Subscribe that reaches a node while no leader is known waits for
     *        the election's outcome (raft.leaderExitStagger) before the client is sent to another server
     */
    public StreamLimits(ScheduledExecutorService timer, Duration initTimeout, int maxConsumers, Duration electionWait) {
        this.timer = timer;
        this.initTimeout = initTimeout;
        this.maxConsumers = maxConsumers;
        this.electionWait = electionWait;
    }

    Duration electionWait() {
        return electionWait;
    }

    /** Runs {@code task} on the timer after {@code delayMs}; false when the node is stopping and it will not run. */
    boolean later(Runnable task, long delayMs) {
        try {
            timer.schedule(task, delayMs, TimeUnit.MILLISECONDS);
            return true;
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return false;
        }
    }

    /** A pending init deadline; {@link #cancel()} once the first frame arrived. */
    public interface Deadline {
        void cancel();
    }

    /**
     * Runs {@code expire} with a DEADLINE_EXCEEDED status naming {@code frame} unless cancelled within
     * the init timeout.
     */
    Deadline awaitFirstFrame(String stream, String frame, java.util.function.Consumer<Status> expire) {
        Status status = Status.DEADLINE_EXCEEDED.withDescription("no " + frame + " frame within "
                + io.hourglass.core.config.Settings.format(initTimeout) + " of opening the " + stream
                + " stream (grpc.initTimeout); the stream is closed");
        ScheduledFuture<?> f;
        try {
            f = timer.schedule(() -> expire.accept(status), initTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return () -> { }; // the node is stopping: the server ends every call anyway
        }
        return () -> f.cancel(false);
    }

    /**
     * Takes a consumer slot, or returns the RESOURCE_EXHAUSTED status to end the stream with. A taken
     * slot is given back with {@link #releaseConsumer()}, exactly once.
     */
    Status acquireConsumer() {
        while (true) {
            int n = consumers.get();
            if (n >= maxConsumers) {
                return Status.RESOURCE_EXHAUSTED.withDescription("this node already serves " + n
                        + " consumers, its limit (grpc.maxConsumers); close streams that are no longer needed");
            }
            if (consumers.compareAndSet(n, n + 1)) {
                return null;
            }
        }
    }

    void releaseConsumer() {
        consumers.decrementAndGet();
    }

    /** Consumer slots taken now. */
    public int consumers() {
        return consumers.get();
    }
}
