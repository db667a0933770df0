package io.hourglass.core.rooms;

import java.util.Arrays;

/**
 * How long a room's barrier took: from the moment its in-flight message reached its members to the
 * ack that made the last sync member ready, counted in fixed buckets. Kept by the leader's gate
 * only (not replicated: a new leader starts counting afresh). Not thread-safe: the rooms engine's
 * thread owns it.
 */
public final class BarrierLatency {
    /** Upper bounds of the buckets, in milliseconds; a last bucket counts everything above. */
    private static final long[] BOUNDS_MS = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000};

    private final long[] counts = new long[BOUNDS_MS.length + 1];

    /** The buckets' upper bounds in ms (inclusive); one more count than bounds: the overflow. */
    public static long[] boundsMs() {
        return BOUNDS_MS.clone();
    }

    void record(long ms) {
        int i = Arrays.binarySearch(BOUNDS_MS, Math.max(0, ms));
        counts[i >= 0 ? i : -i - 1]++;
    }

    /** A copy of the counts, one per bound and the overflow last. */
    public long[] counts() {
        return counts.clone();
    }
}
