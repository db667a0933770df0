package io.hourglass.chaos.run;

import io.hourglass.client.Subscription;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Records a {@code disconnect} for a consumer whose stream ended while the client library
 * reconnects it on its own: the server closes a group member's stream when the shard's leadership
 * moves (a failover, or the leader balancer handing a shard to its preferred node), and a closed
 * stream gives up what it held, so another member receiving those messages next is not a
 * double hold. Seen by polling every {@value #POLL_MS} ms: the stream is no longer subscribed, or
 * the server gave it a new consumer id (a break and reconnect between two polls).
 */
final class StreamBreaks implements AutoCloseable {
    static final long POLL_MS = 20;

    private record Seen(String consumerId, boolean subscribed) {
    }

    private final HistoryRecorder history;
    private final Map<Subscription, String> watched = new ConcurrentHashMap<>();
    private final Map<Subscription, Seen> last = new ConcurrentHashMap<>();
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "chaos-stream-breaks");
        t.setDaemon(true);
        return t;
    });

    StreamBreaks(HistoryRecorder history) {
        this.history = history;
        poller.scheduleWithFixedDelay(this::poll, POLL_MS, POLL_MS, TimeUnit.MILLISECONDS);
    }

    /** Watches {@code s}, recorded under {@code name}, from its first accepted stream on. */
    void watch(Subscription s, String name) {
        watched.put(s, name);
    }

    /** Stops watching {@code s} (closed on purpose: its caller records that disconnect). */
    void forget(Subscription s) {
        watched.remove(s);
        last.remove(s);
    }

    private void poll() {
        watched.forEach((s, name) -> {
            Seen now = new Seen(s.consumerId(), s.isSubscribed());
            Seen before = last.put(s, now);
            if (before == null || before.consumerId().isEmpty()) {
                return;
            }
            boolean ended = before.subscribed() && !now.subscribed();
            boolean replaced = now.subscribed() && !now.consumerId().equals(before.consumerId())
                    && before.subscribed(); // a break and reconnect between two polls
            if (ended || replaced) {
                history.record("disconnect", name, Map.of("consumer", name, "reconnecting", true));
            }
        });
    }

    @Override
    public void close() {
        poller.shutdownNow();
    }
}
