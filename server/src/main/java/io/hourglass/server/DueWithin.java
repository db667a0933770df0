package io.hourglass.server;

import io.hourglass.core.storage.EventStore;
import java.time.Clock;

/**
 * The {@code hourglass_messages_due_within{window}} gauges: stored messages falling due within the
 * next minute, hour and day, over all topics and shards, from this node's replicas. One count serves all three
 * windows and every scrape within {@link #REFRESH_MS}: whole minutes come from the per-minute counts
 * each store keeps, the partial minutes at a window's ends from the keys (up to a limit, then pro rata: {@link io.hourglass.core.storage.QueueStore#countDueWithin}),
 * so it costs a few seeks per topic, not a key per message pending.
 */
final class DueWithin {
    static final long REFRESH_MS = 5_000;
    static final long[] WINDOWS_MS = {60_000, 3_600_000, 86_400_000};
    static final String[] WINDOW_NAMES = {"1m", "1h", "1d"};

    private final java.util.List<EventStore> stores;
    private final Clock clock;
    private boolean counted;
    private long countedAtMs;
    private long[] counts = new long[WINDOWS_MS.length];

    DueWithin(EventStore store, Clock clock) {
        this(java.util.List.of(store), clock);
    }

    /** Over every shard's store of this node. */
    DueWithin(java.util.List<EventStore> stores, Clock clock) {
        this.stores = java.util.List.copyOf(stores);
        this.clock = clock;
    }

    /** Messages due within window {@code i} of {@link #WINDOWS_MS}, counted at most every {@link #REFRESH_MS}. */
    synchronized long count(int i) {
        long now = clock.millis();
        if (!counted || now - countedAtMs >= REFRESH_MS || now < countedAtMs) {
            long[] sum = new long[WINDOWS_MS.length];
            for (EventStore store : stores) {
                long[] c = store.queue().countDueWithin(now, WINDOWS_MS);
                for (int w = 0; w < sum.length; w++) {
                    sum[w] += c[w];
                }
            }
            counts = sum;
            countedAtMs = now;
            counted = true;
        }
        return counts[i];
    }
}
