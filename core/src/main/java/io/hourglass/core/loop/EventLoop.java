package io.hourglass.core.loop;

import io.hourglass.core.HourglassException;
import io.hourglass.core.UnavailableException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that owns a pipeline's leader-side state (Kafka's event-queue pattern): other
 * threads only enqueue events; the loop runs them in order, and runs timers — periodic ones
 * ({@link #every}) and one-shot ones ({@link #at}) — on the injected clock. Nothing the loop owns
 * needs a lock, and every event costs only its own work.
 *
 * <p>Before {@link #start()} nothing runs by itself. A {@link Mode#QUEUED} loop keeps events until
 * a test drains them on its own thread with {@link #runQueued()}; a {@link Mode#INLINE_UNTIL_STARTED}
 * loop runs each event at once on the caller's thread, one at a time, so that a test drives the
 * pipeline synchronously with a manual clock. Timers run only on the started loop.
 *
 * <p>The queue is unbounded: events come from the apply thread, which must never block or lose one,
 * and from client calls, which gRPC flow control and the server's limits already bound.
 */
public final class EventLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventLoop.class);
    /** Longest wait without a timer due, so that a closed flag is seen even without an interrupt. */
    private static final long MAX_WAIT_MS = 1_000;

    /** What happens to events submitted before the loop thread starts. */
    public enum Mode { QUEUED, INLINE_UNTIL_STARTED }

    private record Timer(long atMs, long seq, long periodMs, Runnable task) implements Comparable<Timer> {
        @Override
        public int compareTo(Timer o) {
            int c = Long.compare(atMs, o.atMs);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private final String name;
    private final Clock clock;
    private final Mode mode;
    private final BlockingQueue<Runnable> queue = new LinkedBlockingQueue<>();
    /** Loop thread only, once started; {@link #every} before start adds to {@link #periodic}. */
    private final PriorityQueue<Timer> timers = new PriorityQueue<>();
    private final List<Timer> periodic = new ArrayList<>();
    /** Serialises inline events of callers on different threads before the loop starts. */
    private final ReentrantLock inline = new ReentrantLock();
    private long timerSeq;
    private volatile Thread thread;
    private volatile boolean closed;

    public EventLoop(String name, Clock clock, Mode mode) {
        this.name = name;
        this.clock = clock;
        this.mode = mode;
    }

    public String name() {
        return name;
    }

    /** Runs {@code task} every {@code periodMs} once the loop is started; register before {@link #start()}. */
    public synchronized void every(long periodMs, Runnable task) {
        if (thread != null) {
            throw new IllegalStateException("register periodic tasks of " + name + " before it starts");
        }
        periodic.add(new Timer(0, 0, periodMs, task));
    }

    public synchronized void start() {
        if (thread != null || closed) {
            return;
        }
        long now = clock.millis();
        for (Timer t : periodic) {
            timers.add(new Timer(now + t.periodMs, timerSeq++, t.periodMs, t.task));
        }
        Thread t = new Thread(this::run, name);
        t.setDaemon(true);
        thread = t;
        t.start();
    }

    public boolean isStarted() {
        return thread != null;
    }

    /** True on the loop thread, and on a caller running an inline event before the start. */
    public boolean inLoop() {
        Thread t = thread;
        return t == null ? inline.isHeldByCurrentThread() : t == Thread.currentThread();
    }

    /** Queues an event (or, inline mode before the start, runs it now); after {@link #close()} events are dropped. */
    public void submit(Runnable event) {
        if (thread == null && mode == Mode.INLINE_UNTIL_STARTED && !closed) {
            inline.lock();
            try {
                if (thread == null) {
                    runSafely(event);
                    return;
                }
            } finally {
                inline.unlock();
            }
        }
        synchronized (this) {
            if (!closed) {
                queue.add(event);
            }
        }
    }

    /** Queues a call and answers its result; fails with {@link UnavailableException} once closed. */
    public <T> CompletableFuture<T> call(Callable<T> event) {
        CompletableFuture<T> f = new CompletableFuture<>();
        Call<T> call = new Call<>(event, f, name);
        if (closed) {
            call.abort();
            return f;
        }
        submit(call);
        if (closed && !f.isDone()) {
            call.abort();
        }
        return f;
    }

    /** Runs {@code task} on the loop at or after {@code atMs} of the loop's clock (started loop only). */
    public void at(long atMs, Runnable task) {
        if (thread != null && thread == Thread.currentThread()) {
            timers.add(new Timer(atMs, timerSeq++, 0, task));
        } else if (thread != null) {
            submit(() -> timers.add(new Timer(atMs, timerSeq++, 0, task)));
        }
    }

    /** A queued call whose caller waits; answered with an error if the loop closes first. */
    private static final class Call<T> implements Runnable {
        private final Callable<T> body;
        private final CompletableFuture<T> answer;
        private final String loop;

        Call(Callable<T> body, CompletableFuture<T> answer, String loop) {
            this.body = body;
            this.answer = answer;
            this.loop = loop;
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
            answer.completeExceptionally(new UnavailableException("the " + loop + " loop shut down", null));
        }
    }

    /**
     * Runs queued events on the caller's thread until the queue is empty, including events queued
     * meanwhile (tests). Refused once the loop thread runs.
     */
    public int runQueued() {
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
        while (!closed) {
            try {
                long wait = runDueTimers();
                Runnable r = queue.poll(wait, TimeUnit.MILLISECONDS);
                while (r != null && !closed) {
                    runSafely(r);
                    r = timers.isEmpty() || timers.peek().atMs > clock.millis() ? queue.poll() : null;
                }
            } catch (InterruptedException e) {
                if (!closed) {
                    LOG.warn("{} interrupted; stopping", name);
                }
                return;
            }
        }
    }

    /** Runs the timers due now; returns how long to wait for the next one. */
    private long runDueTimers() {
        long now = clock.millis();
        while (!timers.isEmpty() && timers.peek().atMs <= now && !closed) {
            Timer t = timers.poll();
            runSafely(t.task);
            if (t.periodMs > 0) {
                timers.add(new Timer(clock.millis() + t.periodMs, timerSeq++, t.periodMs, t.task));
            }
            now = clock.millis();
        }
        return timers.isEmpty() ? MAX_WAIT_MS : Math.max(1, Math.min(MAX_WAIT_MS, timers.peek().atMs - now));
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

    /** Stops the thread after the event it is running; queued events are dropped, queued calls answered with an error. */
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
