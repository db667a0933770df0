package io.hourglass.core.rooms;

import io.hourglass.core.HourglassException;
import io.hourglass.core.UnavailableException;
import java.time.Clock;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that owns the rooms' leader-side state (Kafka's event-queue pattern): other threads
 * only enqueue events; the loop runs them in order and, every {@code intervalMs} of the injected
 * clock, a housekeeping pass.
 *
 * <p>Until {@link #start()} nothing runs by itself: a test drains the queue on its own thread with
 * {@link #runQueued()} and calls housekeeping through an event, so it needs neither threads nor sleeps.
 *
 * <p>The queue is unbounded: events come from the apply thread, which must never block or lose one,
 * and from client calls, which gRPC flow control already bounds.
 */
final class RoomEventLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RoomEventLoop.class);

    private final String name;
    private final Clock clock;
    private final long intervalMs;
    private final Runnable housekeeping;
    private final BlockingQueue<Runnable> queue = new LinkedBlockingQueue<>();
    private volatile Thread thread;
    private volatile boolean closed;

    RoomEventLoop(String name, Clock clock, long intervalMs, Runnable housekeeping) {
        this.name = name;
        this.clock = clock;
        this.intervalMs = intervalMs;
        this.housekeeping = housekeeping;
    }

    synchronized void start() {
        if (thread != null || closed) {
            return;
        }
        Thread t = new Thread(this::run, name);
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    boolean isStarted() {
        return thread != null;
    }

    /** Queues an event; after {@link #close()} events are dropped. */
    void submit(Runnable event) {
        synchronized (this) {
            if (!closed) {
                queue.add(event);
            }
        }
    }

    /** Queues a call and answers its result; fails with {@link UnavailableException} once closed. */
    <T> CompletableFuture<T> call(Callable<T> event) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Call<T> call = new Call<>(event, f);
        synchronized (this) {
            if (!closed) {
                queue.add(call);
                return f;
            }
        }
        call.abort();
        return f;
    }

    /** A queued call whose caller waits; answered with an error if the loop closes first. */
    private static final class Call<T> implements Runnable {
        private final Callable<T> body;
        private final CompletableFuture<T> answer;

        Call(Callable<T> body, CompletableFuture<T> answer) {
            this.body = body;
            this.answer = answer;
        }

        @Override
        public void run() {
            try {
                answer.complete(body.call());
            } catch (Exception e) {
                answer.completeExceptionally(e);
            }
        }

        void abort() {
            answer.completeExceptionally(new UnavailableException("the rooms engine shut down", null));
        }
    }

    /**
     * Runs queued events on the caller's thread until the queue is empty, including events queued
     * meanwhile (tests). Refused once the loop thread runs.
     */
    int runQueued() {
        if (thread != null) {
            throw new IllegalStateException("the " + name + " thread owns the queue");
        }
        int n = 0;
        for (Runnable r = queue.poll(); r != null; r = queue.poll()) {
            runSafely(r);
            n++;
        }
        return n;
    }

    private void run() {
        long nextTick = clock.millis() + intervalMs;
        while (!closed) {
            try {
                Runnable r = queue.poll(Math.max(1, Math.min(intervalMs, nextTick - clock.millis())),
                        TimeUnit.MILLISECONDS);
                if (r != null) {
                    runSafely(r);
                }
                if (clock.millis() >= nextTick) {
                    runSafely(housekeeping);
                    nextTick = clock.millis() + intervalMs;
                }
            } catch (InterruptedException e) {
                if (!closed) {
                    LOG.warn("{} interrupted; stopping", name);
                }
                return;
            }
        }
    }

    private void runSafely(Runnable r) {
        try {
            r.run();
        } catch (HourglassException e) {
            LOG.warn("{} event failed: {}", name, e.getMessage());
        } catch (RuntimeException e) {
            LOG.error("{} event failed", name, e);
        }
    }

    /** Stops the thread after the event it is running; queued events are dropped. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            closed = true;
            t = thread;
        }
        if (t != null && t != Thread.currentThread()) {
            t.interrupt();
            try {
                t.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Runnable r = queue.poll(); r != null; r = queue.poll()) {
            if (r instanceof Call<?> c) {
                c.abort();
            }
        }
    }
}
