package io.hourglass.core.storage;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * A topic's figures for operators ({@code topic stats}, {@code topic groups}, the console, which asks
 * every 2 s) without reading the topic's messages: what is pending and due comes from counters kept
 * per topic and hour ({@link DueCounts}) plus at most a few bounded reads of keys in the hour {@code now}
 * falls in; expiring, acknowledged and delivered counts from the keys of their own indexes, each
 * O(its entries of the topic), not O(messages). A read of a whole topic took seconds with millions of
 * messages pending, and parsed all of them each time.
 */
public final class TopicFigures {
    /** Most keys one read of the current hour's part goes through (see {@link DueCounts#partOfBucket}). */
    static final long EXACT_HOUR_LIMIT = 10_000;

    private final EventStore store;
    private final DueCounts dueCounts;

    TopicFigures(EventStore store, DueCounts dueCounts) {
        this.store = store;
        this.dueCounts = dueCounts;
    }

    /**
     * What a topic holds at {@code nowMs}: stored messages, those due (at or before now), the due time
     * of the first stored one, and for each horizon those due no later than now plus it (the due ones
     * included). Exact while no more than {@link #EXACT_HOUR_LIMIT} messages lie on either side of a
     * window's edge within its hour; beyond that the split of that hour is estimated pro rata.
     */
    public record Due(long pending, long dueNow, long firstDueAtMs, long[] dueWithin) {
    }

    public Due due(String topic, long nowMs, long... horizonsMs) {
        long hash = EventKey.topicHash(topic);
        long pending = dueCounts.topicHours(store, hash, Long.MIN_VALUE, Long.MAX_VALUE);
        long[] within = new long[horizonsMs.length];
        if (pending == 0) {
            return new Due(0, 0, 0, within);
        }
        long[] first = {0};
        store.scanKeys(d -> d.events, EventKey.scanStart(hash), end(hash), k -> {
            first[0] = ByteBuffer.wrap(k, 8, 8).getLong();
            return false;
        });
        long hour = Math.floorDiv(nowMs, DueCounts.HOUR_MS);
        long head = part(hash, hour * DueCounts.HOUR_MS, nowMs);
        long dueNow = dueCounts.topicHours(store, hash, Long.MIN_VALUE, hour) + head;
        // After now within now's hour: the rest of what the hour holds (so an estimated head and its
        // rest still add up to the hour), the same for every horizon that leaves the hour.
        long restOfHour = Math.max(0, dueCounts.topicHours(store, hash, hour, hour + 1) - head);
        for (int i = 0; i < horizonsMs.length; i++) {
            long toMs = nowMs + horizonsMs[i];
            long lastHour = Math.floorDiv(toMs, DueCounts.HOUR_MS);
            if (lastHour == hour) {
                within[i] = dueNow + part(hash, nowMs + 1, toMs);
                continue;
            }
            within[i] = dueNow + restOfHour + dueCounts.topicHours(store, hash, hour + 1, lastHour)
                    + part(hash, lastHour * DueCounts.HOUR_MS, toMs);
        }
        return new Due(pending, dueNow, first[0], within);
    }

    /** The due times of the topic's messages due in {@code [fromMs, untilMs)}, in order: one seek, then those keys only. */
    public void dueTimes(String topic, long fromMs, long untilMs, java.util.function.LongPredicate visitor) {
        long hash = EventKey.topicHash(topic);
        byte[] start = ByteBuffer.allocate(EventKey.LENGTH).putLong(hash).putLong(fromMs).putLong(0).array();
        store.scanKeys(d -> d.events, start, end(hash), k -> {
            long due = ByteBuffer.wrap(k, 8, 8).getLong();
            return due < untilMs && visitor.test(due);
        });
    }

    /** Messages of topic {@code hash} due in {@code [fromMs, toMs]}, both in one hour. */
    private long part(long hash, long fromMs, long toMs) {
        if (fromMs > toMs) {
            return 0;
        }
        long hour = Math.floorDiv(fromMs, DueCounts.HOUR_MS);
        return DueCounts.partOfBucket(hour * DueCounts.HOUR_MS, DueCounts.HOUR_MS,
                dueCounts.topicHours(store, hash, hour, hour + 1), fromMs, toMs, EXACT_HOUR_LIMIT,
                (from, to, cap) -> countKeys(hash, from, to, cap));
    }

    /** The topic's keys due in {@code [fromMs, toMs]}: one seek, then up to {@code cap} + 1 keys. */
    private long countKeys(long hash, long fromMs, long toMs, long cap) {
        if (fromMs > toMs) {
            return 0;
        }
        long[] n = {0};
        byte[] start = ByteBuffer.allocate(EventKey.LENGTH).putLong(hash).putLong(fromMs).putLong(0).array();
        store.scanKeys(d -> d.events, start, end(hash), k -> {
            if (ByteBuffer.wrap(k, 8, 8).getLong() > toMs) {
                return false;
            }
            return ++n[0] <= cap;
        });
        return n[0];
    }

    /** The topic's messages whose TTL ends at or before {@code untilMs}: O(such messages of all topics). */
    public long expiringBy(String topic, long untilMs) {
        long hash = EventKey.topicHash(topic);
        long[] n = {0};
        byte[] end = ByteBuffer.allocate(8).putLong(untilMs + 1).array();
        store.scanKeys(d -> d.expiry, new byte[0], end, k -> {
            if (ByteBuffer.wrap(k, 8, 8).getLong() == hash) {
                n[0]++;
            }
            return true;
        });
        return n[0];
    }

    /** Per durable group, the topic's stored messages it has acknowledged (receipts); O(receipts of the topic). */
    public Map<String, Long> receipts(String topic) {
        Map<String, Long> counts = new TreeMap<>();
        long hash = EventKey.topicHash(topic);
        store.scanKeys(d -> d.receipts, EventKey.scanStart(hash), end(hash), k -> {
            counts.merge(new String(k, EventKey.LENGTH, k.length - EventKey.LENGTH, StandardCharsets.UTF_8), 1L, Long::sum);
            return true;
        });
        return counts;
    }

    /** The topic's stored delivery counts of durable groups (key, group, count); O(those entries). */
    public void deliveryCounts(String topic, QueueStore.CountVisitor visitor) {
        long hash = EventKey.topicHash(topic);
        store.scan(d -> d.deliveries, EventKey.scanStart(hash), end(hash), (k, v) -> visitor.visit(
                EventKey.fromBytes(Arrays.copyOf(k, EventKey.LENGTH)),
                new String(k, EventKey.LENGTH, k.length - EventKey.LENGTH, StandardCharsets.UTF_8),
                ByteBuffer.wrap(v).getInt()));
    }

    /**
     * The topics with stored messages whose names start with {@code prefix}: one message read per
     * topic, then a seek past the topic's keys, so O(topics), not O(messages). Two topics whose 64-bit
     * hashes collide share a key range; only the first one's name is seen (odds: 2^-64 per pair).
     */
    public void names(String prefix, Consumer<String> names) {
        store.read((d, snapshot) -> {
            try (ReadOptions ro = new ReadOptions().setSnapshot(snapshot);
                 RocksIterator it = d.rocks.newIterator(d.events, ro)) {
                it.seekToFirst();
                while (it.isValid()) {
                    long hash = ByteBuffer.wrap(it.key(), 0, 8).getLong();
                    String topic = QueueStore.parse(it.value()).getTopic();
                    if (topic.startsWith(prefix)) {
                        names.accept(topic);
                    }
                    if (hash == -1L) {
                        break;
                    }
                    it.seek(EventKey.scanStart(hash + 1));
                }
                it.status();
                return null;
            } catch (RocksDBException e) {
                throw new StorageException("scan failed: " + e.getMessage(), e);
            }
        });
    }

    /** Where a topic's keys end (exclusive; null: the end of the family). */
    private static byte[] end(long hash) {
        return hash == -1L ? null : EventKey.scanStart(hash + 1);
    }
}
