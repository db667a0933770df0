package io.hourglass.core.delivery;

import io.hourglass.core.proto.StoredMessage;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves due messages from the store to consumers. One pass scans, for every topic that has
 * consumers, only the keys due by now, and offers each message to every recipient that has not
 * acknowledged it and does not hold it in flight. The loop runs a pass, then waits for the poll
 * interval or a wake-up — but not at all after a pass that dispatched something.
 *
 * <p>Passes run on one thread (the loop's, or a test's). Before a message is handed out, the live
 * store is checked again, after the in-flight check: a delete or receipt committed meanwhile
 * (which clears the in-flight entry only after the commit) is therefore always seen.
 */
final class Dispatcher implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Dispatcher.class);

    private final EventStore store;
    private final Hub hub;
    private final InFlightTracker inFlight;
    private final Deleter deleter;
    private final Clock clock;
    private final DeliveryMetrics metrics;
    private final long pollMs;
    private final BooleanSupplier leading;
    private final Semaphore wakeups = new Semaphore(0);
    private volatile boolean running = true;

    Dispatcher(EventStore store, Hub hub, InFlightTracker inFlight, Deleter deleter, Clock clock,
               DeliveryMetrics metrics, long pollMs, BooleanSupplier leading) {
        this.store = store;
        this.hub = hub;
        this.inFlight = inFlight;
        this.deleter = deleter;
        this.clock = clock;
        this.metrics = metrics;
        this.pollMs = pollMs;
        this.leading = leading;
    }

    /** Ends the wait of the loop at once (consumer registered, due message applied, NACK). */
    void wake() {
        wakeups.release();
    }

    void stop() {
        running = false;
        wake();
    }

    @Override
    public void run() {
        while (running) {
            int dispatched = 0;
            try {
                dispatched = leading.getAsBoolean() ? pass() : 0;
            } catch (RuntimeException e) {
                LOG.error("dispatch pass failed", e);
            }
            if (dispatched == 0) {
                try {
                    wakeups.tryAcquire(pollMs, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            wakeups.drainPermits();
        }
    }

    /** One pass over every topic with consumers; returns how many deliveries it made. */
    int pass() {
        metrics.dispatchPasses.increment();
        long now = clock.millis();
        int dispatched = 0;
        for (String topic : hub.topics()) {
            Hub.Route route = hub.route(topic);
            if (route.groups().isEmpty() && route.universal().isEmpty()) {
                continue;
            }
            int[] count = {0};
            metrics.topicScans.increment();
            store.scanDue(EventKey.topicHash(topic), now, (key, message) -> {
                if (!message.getTopic().equals(topic)) {
                    return true; // another topic with the same hash
                }
                count[0] += offer(route, key, message, now);
                return !route.everyoneFull();
            });
            dispatched += count[0];
        }
        return dispatched;
    }

    private int offer(Hub.Route route, EventKey key, StoredMessage message, long now) {
        if (message.getDueAtMs() > now) {
            return 0;
        }
        if (message.getExpiresAtMs() > 0 && message.getExpiresAtMs() <= now) {
            if (deleter.submitOnce(key, io.hourglass.core.command.StateApplier.ALL_GROUPS)) {
                metrics.expired.increment();
            }
            return 0;
        }
        int n = 0;
        for (Map.Entry<String, List<Consumer>> group : route.groups().entrySet()) {
            String recipient = "g:" + group.getKey();
            if (inFlight.isBlocked(key, recipient, now) || !stillPending(key, group.getKey())) {
                continue;
            }
            if (hub.offerToGroup(route, group.getKey(), c -> deliver(key, message, recipient, c, now)) != null) {
                n++;
            }
        }
        for (Consumer c : route.universal()) {
            String recipient = c.recipient();
            if (c.hasRoom() && !inFlight.isBlocked(key, recipient, now) && stillPending(key, null)) {
                Delivery d = deliver(key, message, recipient, c, now);
                if (d != null) {
                    c.push(d);
                    n++;
                }
            }
        }
        return n;
    }

    /** Read from the live store, not the scan's snapshot: the message exists and the group has no receipt. */
    private boolean stillPending(EventKey key, String group) {
        return group == null ? store.message(key).isPresent()
                : !store.hasReceipt(key, group) && store.message(key).isPresent();
    }

    /** The delivery for {@code c}, recorded in flight; null when {@code c} was disconnected meanwhile. */
    private Delivery deliver(EventKey key, StoredMessage message, String recipient, Consumer c, long now) {
        int attempt = inFlight.claim(key, recipient, c, now);
        if (attempt == 0) {
            return null;
        }
        metrics.dispatched.increment();
        if (attempt > 1) {
            metrics.redelivered.increment();
        }
        metrics.latenessMsSum.add(Math.max(0, now - message.getDueAtMs()));
        return new Delivery(key, message, attempt, now);
    }
}
