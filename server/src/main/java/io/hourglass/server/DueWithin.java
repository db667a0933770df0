package io.hourglass.server;

import io.hourglass.core.storage.EventStore;
import java.time.Clock;

/**
 * The {@code hourglass_messages_due_within{window}} gauges: stored messages falling due within the
 * next minute, hour and day, over all topics, from this node's replica. One count serves all three
 * windows and every scrape within {@link #REFRESH_MS}: it costs a seek per topic plus a key per
 * message due within a day ({@link EventStore#countDueWithin}).
 */
final class DueWithin {
    static final long REFRESH_MS = 5_000;
    static final long[] WINDOWS_MS = {60_000, 3_600_000, 86_400_000};
    static final String[] WINDOW_NAMES = {"1m", "1h", "1d"};

    private final EventStore store;
    private final Clock clock;
    private boolean counted;
    private long countedAtMs;
    private long[] counts = new long[WINDOWS_MS.length];

    DueWithin(EventStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
    }

    /** Messages due within window {@code i} of {@link #WINDOWS_MS}, counted at most every {@link #REFRESH_MS}. */
    synchronized long count(int i) {
        long now = clock.millis();
        if (!counted || now - countedAtMs >= REFRESH_MS || now < countedAtMs) {
            counts = store.countDueWithin(now, WINDOWS_MS);
            countedAtMs = now;
            counted = true;
        }
        return counts[i];
    }
}
