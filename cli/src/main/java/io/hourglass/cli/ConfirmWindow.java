package io.hourglass.cli;

import io.hourglass.client.UnavailableException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The confirmed ACKs {@code consume --confirm} has sent and not yet seen answered, at most
 * {@code capacity} of them: one confirmation round trip (a replicated delete batch) per
 * {@code capacity} deliveries instead of one per delivery. Adding to a full window waits for
 * the oldest; a confirmation that fails, or does not come within {@code wait}, fails the command.
 *
 * <p>Thread-safety: the deque is guarded by this object's monitor; the futures are waited for
 * outside it. The handler thread adds, the command's thread drains at the end.
 */
final class ConfirmWindow {
    private record Pending(String id, CompletableFuture<Void> confirmed) {
    }

    private final int capacity;
    private final Duration wait;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();

    ConfirmWindow(int capacity, Duration wait) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
        }
        this.capacity = capacity;
        this.wait = wait;
    }

    /** Adds a confirmation; first waits for the oldest ones while the window is full. */
    void add(String id, CompletableFuture<Void> confirmed) throws Exception {
        while (true) {
            Pending oldest;
            synchronized (this) {
                while (!pending.isEmpty() && pending.peek().confirmed().isDone()) {
                    settle(pending.poll());
                }
                if (pending.size() < capacity) {
                    pending.add(new Pending(id, confirmed));
                    return;
                }
                oldest = pending.poll();
            }
            settle(oldest);
        }
    }

    /** Waits for every confirmation still outstanding. */
    void awaitAll() throws Exception {
        while (true) {
            Pending oldest;
            synchronized (this) {
                oldest = pending.poll();
            }
            if (oldest == null) {
                return;
            }
            settle(oldest);
        }
    }

    private void settle(Pending p) throws Exception {
        try {
            p.confirmed().get(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new UnavailableException("ACK of " + p.id() + " not confirmed within "
                    + DurationConverter.format(wait), "", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }
}
