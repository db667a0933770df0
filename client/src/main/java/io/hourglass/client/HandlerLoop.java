package io.hourglass.client;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that calls a subscription's {@link DeliveryHandler}, in arrival order.
 *
 * <p>The queue is unbounded in type but bounded in fact: each stream has at most
 * {@code maxBuffered} deliveries outstanding (flow control), and deliveries of ended streams are
 * skipped, not handled — the server released them when the stream ended and will redeliver.
 * The thread is a daemon: an open subscription does not keep the JVM alive.
 */
final class HandlerLoop {
    private static final Logger LOG = LoggerFactory.getLogger(HandlerLoop.class);

    /** A delivery and the stream that carried it. */
    record Item(ConsumerStream stream, ReceivedMessage message) {
    }

    private static final Item STOP = new Item(null, null);

    private final DeliveryHandler handler;
    private final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
    private final Thread thread;
    private volatile boolean stopped;

    HandlerLoop(String threadName, DeliveryHandler handler) {
        this.handler = handler;
        this.thread = new Thread(this::run, threadName);
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    void submit(Item item) {
        if (stopped) {
            return;
        }
        queue.add(item);
    }

    /** Deliveries waiting for the handler (tests). */
    int queued() {
        return queue.size();
    }

    boolean isHandlerThread() {
        return Thread.currentThread() == thread;
    }

    /**
     * Stops after the running handler call (queued deliveries are dropped) and waits up to
     * {@code wait} for it, unless called from the handler itself.
     */
    void stop(Duration wait) {
        stopped = true;
        queue.add(STOP);
        if (isHandlerThread() || wait.isZero()) {
            return;
        }
        try {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait.toNanos())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("delivery handler on {} still running after {} ms", thread.getName(),
                    wait.toMillis());
        }
    }

    private void run() {
        while (!stopped) {
            Item item;
            try {
                item = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            if (item == STOP || stopped) {
                return;
            }
            if (!item.stream().isOpen()) {
                LOG.debug("skipping {}: its stream has ended", item.message().id());
                continue;
            }
            handle(item);
        }
    }

    private void handle(Item item) {
        DeliveryContext context = item.stream().contextFor(item.message());
        try {
            handler.onDelivery(item.message(), context);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            LOG.warn("delivery handler failed on {}; NACKing it", item.message().id(), e);
            if (!ConsumerStream.isSettled(context)) {
                context.nack();
            }
        } finally {
            item.stream().deliveryDone();
            // ACKs made here wait for the next frame while more of this stream's deliveries are
            // queued (one frame for many); the last one before an idle moment sends them.
            Item next = queue.peek();
            if (next == null || next.stream() != item.stream()) {
                item.stream().flushAcks();
            }
        }
    }
}
