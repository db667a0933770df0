package io.hourglass.core.storage;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;

/**
 * How many stored messages fall due in each minute, over all topics of one store: what counting the
 * messages due within an hour or a day sums, so that it costs O(minutes), not O(messages) (it read
 * every key due within a day on each count: seconds with millions pending). One counter per minute
 * that holds a due message; nothing per message.
 *
 * <p>Built by the first count, from a RocksDB snapshot taken under this object's monitor: from that
 * mark on, every commit hands its changes here under the same monitor ({@link #committed}), so each
 * commit is counted once — before the mark through the snapshot, after it through its changes. The
 * two are sums, in any order. Installing a checkpoint drops the counts ({@link #reset}); the next
 * count builds them again.
 */
final class DueCounts {
    static final long MINUTE_MS = 60_000;

    /** Messages per minute of due time (minute = due / {@link #MINUTE_MS}); guarded by this. */
    private final TreeMap<Long, Long> perMinute = new TreeMap<>();
    /** Commits hand their changes over from the build's mark on; guarded by this. */
    private boolean recording;
    private final Object building = new Object();
    private volatile boolean built;

    /** The minute of a due time, the key of {@link #perMinute}. */
    static long minute(long dueAtMs) {
        return Math.floorDiv(dueAtMs, MINUTE_MS);
    }

    /** Adds one batch's changes (minute to messages added, negative for removed); the caller holds this monitor. */
    void committed(Map<Long, Long> changes) {
        if (recording) {
            changes.forEach(this::add);
        }
    }

    private void add(long minute, long delta) {
        Long now = perMinute.merge(minute, delta, Long::sum);
        if (now != null && now == 0) {
            perMinute.remove(minute);
        }
    }

    /**
     * The store was replaced: nothing counted is valid any more. Called under the store's write lock,
     * so no build runs meanwhile (a build reads, and marks itself done, under the read lock).
     */
    void reset() {
        synchronized (this) {
            perMinute.clear();
            recording = false;
        }
        built = false;
    }

    /** Messages due in minutes {@code [fromMinute, toMinute)}; builds the counts first if needed. */
    long minutes(EventStore store, long fromMinute, long toMinute) {
        if (!built) {
            build(store);
        }
        synchronized (this) {
            long sum = 0;
            for (long n : perMinute.subMap(fromMinute, toMinute).values()) {
                sum += n;
            }
            return sum;
        }
    }

    /** One pass over the keys of {@code events} (no value read), from a snapshot that marks where commits take over. */
    private void build(EventStore store) {
        synchronized (building) {
            if (built) {
                return;
            }
            store.read((d, ignored) -> {
                Snapshot mark;
                synchronized (this) {
                    mark = d.rocks.getSnapshot();
                    recording = true;
                }
                Map<Long, Long> counted = new HashMap<>();
                try (ReadOptions ro = new ReadOptions().setSnapshot(mark);
                     RocksIterator it = d.rocks.newIterator(d.events, ro)) {
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        counted.merge(minute(java.nio.ByteBuffer.wrap(it.key(), 8, 8).getLong()), 1L, Long::sum);
                    }
                } finally {
                    d.rocks.releaseSnapshot(mark);
                }
                synchronized (this) {
                    counted.forEach(this::add);
                }
                built = true;
                return null;
            });
        }
    }
}
