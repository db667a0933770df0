package io.hourglass.client;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that calls a room session's {@link RoomHandler}, in arrival order.
 *
 * <p>The queue is unbounded: a room releases its next message only when every SYNC member has
 * acked the last, so what piles up here is bounded by the handler's own acking, except for
 * out-of-band messages and ASYNC subscriptions, which a handler must keep up with. The thread is a
 * daemon: an open session does not keep the JVM alive.
 */
final class RoomHandlerLoop {
    private static final Logger LOG = LoggerFactory.getLogger(RoomHandlerLoop.class);

    /** One handler call. */
    @FunctionalInterface
    interface Event {
        void deliver(RoomHandler handler) throws Exception;
    }

    private static final Event STOP = h -> { };

    private final RoomHandler handler;
    private final LinkedBlockingQueue<Event> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean stopped;

    RoomHandlerLoop(String threadName, RoomHandler handler) {
        this.handler = handler;
        this.thread = new Thread(this::run, threadName);
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    void submit(Event event) {
        if (!stopped) {
            queue.add(event);
        }
    }

    /**
     * Stops after the running handler call (queued events are dropped) and waits up to
     * {@code wait} for it, unless called from the handler itself.
     */
    void stop(Duration wait) {
        stopped = true;
        queue.add(STOP);
        if (Thread.currentThread() == thread || wait.isZero()) {
            return;
        }
        try {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait.toNanos())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("room handler on {} still running after {} ms", thread.getName(), wait.toMillis());
        }
    }

    private void run() {
        while (!stopped) {
            Event event;
            try {
                event = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            if (event == STOP || stopped) {
                return;
            }
            try {
                event.deliver(handler);
            } catch (VirtualMachineError e) {
                throw e;
            } catch (Throwable e) {
                LOG.warn("room handler on {} failed", thread.getName(), e);
            }
        }
    }
}
