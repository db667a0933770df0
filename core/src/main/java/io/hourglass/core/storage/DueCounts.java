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
    static final long HOUR_MS = 3_600_000;

    /** One counter's place: a topic (by hash) and a minute of due time. */
    record Cell(long topicHash, long minute) {
    }

    /** Messages per minute of due time (minute = due / {@link #MINUTE_MS}); guarded by this. */
    private final TreeMap<Long, Long> perMinute = new TreeMap<>();
    /**
     * Messages per topic (by hash) and hour of due time, for a topic's figures: hours, not minutes, so
     * that a topic with messages spread over a month keeps 720 counters, not 43 200; guarded by this.
     */
    private final Map<Long, TreeMap<Long, Long>> perTopicHour = new HashMap<>();
    /** Commits hand their changes over from the build's mark on; guarded by this. */
    private boolean recording;
    private final Object building = new Object();
    private volatile boolean built;

    /** The minute of a due time, the key of {@link #perMinute}. */
    static long minute(long dueAtMs) {
        return Math.floorDiv(dueAtMs, MINUTE_MS);
    }

    /** Adds one batch's changes (messages added, negative for removed); the caller holds this monitor. */
    void committed(Map<Cell, Long> changes) {
        if (recording) {
            changes.forEach(this::add);
        }
    }

    private void add(Cell cell, long delta) {
        Long now = perMinute.merge(cell.minute(), delta, Long::sum);
        if (now != null && now == 0) {
            perMinute.remove(cell.minute());
        }
        TreeMap<Long, Long> hours = perTopicHour.computeIfAbsent(cell.topicHash(), h -> new TreeMap<>());
        long hour = Math.floorDiv(cell.minute(), HOUR_MS / MINUTE_MS);
        Long inHour = hours.merge(hour, delta, Long::sum);
        if (inHour != null && inHour == 0) {
            hours.remove(hour);
            if (hours.isEmpty()) {
                perTopicHour.remove(cell.topicHash());
            }
        }
    }

    /**
     * The store was replaced: nothing counted is valid any more. Called under the store's write lock,
     * so no build runs meanwhile (a build reads, and marks itself done, under the read lock).
     */
    void reset() {
        synchronized (this) {
            perMinute.clear();
            perTopicHour.clear();
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

    /** Messages of topic {@code topicHash} due in hours {@code [fromHour, toHour)} (hour = due / {@link #HOUR_MS}). */
    long topicHours(EventStore store, long topicHash, long fromHour, long toHour) {
        if (!built) {
            build(store);
        }
        synchronized (this) {
            TreeMap<Long, Long> hours = perTopicHour.get(topicHash);
            long sum = 0;
            if (hours != null && fromHour < toHour) {
                for (long n : hours.subMap(fromHour, toHour).values()) {
                    sum += n;
                }
            }
            return sum;
        }
    }

    /**
     * The part of a bucket's {@code inBucket} messages due in {@code [fromMs, toMs]}, both inside the
     * bucket that starts at {@code bucketStart}. The part is read from the keys up to {@code limit};
     * past that, the rest of the bucket is (the part is the bucket's count minus it: a batch published
     * with one delay fills a few seconds of a bucket, so one side is small). Only when both sides hold
     * more is it estimated pro rata, within what the two reads proved.
     */
    static long partOfBucket(long bucketStart, long bucketMs, long inBucket, long fromMs, long toMs, long limit,
                             KeyCounter keys) {
        long span = toMs - fromMs + 1;
        if (inBucket == 0 || span == bucketMs) {
            return inBucket;
        }
        long inside = keys.count(fromMs, toMs, limit);
        if (inside <= limit) {
            return inside;
        }
        long outside = keys.count(bucketStart, fromMs - 1, limit);
        if (outside <= limit) { // the second piece only when the first left room under the cap
            outside += keys.count(toMs + 1, bucketStart + bucketMs - 1, limit - outside);
        }
        if (outside <= limit) {
            return Math.max(inside, inBucket - outside);
        }
        long estimate = inBucket * span / bucketMs;
        return Math.max(limit + 1, Math.min(estimate, inBucket - limit - 1));
    }

    /** Counts the keys due in {@code [fromMs, toMs]}, stopping past {@code cap} (and answering more than it). */
    @FunctionalInterface
    interface KeyCounter {
        long count(long fromMs, long toMs, long cap);
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
                Map<Cell, Long> counted = new HashMap<>();
                try (ReadOptions ro = new ReadOptions().setSnapshot(mark);
                     RocksIterator it = d.rocks.newIterator(d.events, ro)) {
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        java.nio.ByteBuffer key = java.nio.ByteBuffer.wrap(it.key());
                        counted.merge(new Cell(key.getLong(0), minute(key.getLong(8))), 1L, Long::sum);
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
