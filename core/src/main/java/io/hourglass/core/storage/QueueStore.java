package io.hourglass.core.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.hourglass.core.proto.StoredMessage;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The scheduled queue's view of the store: its reads of the {@code events}, {@code expiry},
 * {@code receipts}, {@code deferred}, {@code deliveries}, {@code recurring} and {@code keys} column
 * families (DESIGN §2), as {@code RoomStore} is the rooms'. Reached with {@link EventStore#queue()};
 * reads from any thread, each scan from one consistent snapshot (of whichever database the store
 * holds at the time: a checkpoint install swaps it under the view).
 */
public final class QueueStore {
    /** Receives scanned messages; returns false to stop the scan. */
    @FunctionalInterface
    public interface ScanVisitor {
        boolean visit(EventKey key, StoredMessage message);
    }

    /** Receives one stored deferral; returns whether to go on. */
    @FunctionalInterface
    public interface DeferralVisitor {
        boolean visit(EventKey key, String group, long untilMs);
    }

    /** Receives one stored delivery count; returns whether to go on. */
    @FunctionalInterface
    public interface CountVisitor {
        boolean visit(EventKey key, String group, int deliveries);
    }

    private final EventStore store;
    private final DueCounts dueCounts;

    QueueStore(EventStore store, DueCounts dueCounts) {
        this.store = store;
        this.dueCounts = dueCounts;
    }

    public Optional<StoredMessage> message(EventKey key) {
        byte[] value = store.get(d -> d.events, key.toBytes());
        return value == null ? Optional.empty() : Optional.of(parse(value));
    }

    public boolean hasReceipt(EventKey key, String group) {
        return store.get(d -> d.receipts, StoreKeys.receiptKey(key, group)) != null;
    }

    /** The stored message of {@code topic} under schedule key {@code key}, if any (hash collisions ruled out). */
    public Optional<EventKey> keyed(String topic, String key) {
        byte[] value = store.get(d -> d.keys, StoreKeys.scheduleKey(topic, key));
        if (value == null) {
            return Optional.empty();
        }
        EventKey eventKey = EventKey.fromBytes(value);
        return message(eventKey).filter(m -> m.getTopic().equals(topic) && m.getKey().equals(key)).map(m -> eventKey);
    }

    /**
     * How many stored messages fall due after {@code nowMs} and no later than {@code nowMs + horizon}
     * for each horizon, over all topics. The whole minutes inside a window come from {@link DueCounts};
     * the partial minutes at its two ends from the keys, exactly when the part or the rest of its
     * minute holds at most {@link #EXACT_MINUTE_LIMIT} messages, else estimated pro rata from the
     * minute's count ({@link #partOfMinute}; a gauge, not a ledger). So a count costs O(topics +
     * minutes + 4 × {@link #EXACT_MINUTE_LIMIT}) whatever is pending and however densely; no value is read.
     */
    public long[] countDueWithin(long nowMs, long... horizonsMs) {
        long[] counts = new long[horizonsMs.length];
        long fromMs = nowMs + 1;
        long firstMinute = DueCounts.minute(fromMs);
        long head = -1; // the partial minute every window starts in: counted once, for all of them
        for (int i = 0; i < horizonsMs.length; i++) {
            long toMs = nowMs + horizonsMs[i];
            long lastMinute = DueCounts.minute(toMs);
            if (firstMinute == lastMinute) {
                counts[i] = partOfMinute(fromMs, toMs);
                continue;
            }
            if (head < 0) {
                head = partOfMinute(fromMs, (firstMinute + 1) * DueCounts.MINUTE_MS - 1);
            }
            counts[i] = head + dueCounts.minutes(store, firstMinute + 1, lastMinute)
                    + partOfMinute(lastMinute * DueCounts.MINUTE_MS, toMs);
        }
        return counts;
    }

    /** Most keys one read of a window's end minute goes through (see {@link #partOfMinute}). */
    static final long EXACT_MINUTE_LIMIT = 10_000;

    /**
     * Messages due in {@code [fromMs, toMs]}, both within one minute: see {@link #countDueWithin}. The
     * part is read up to {@link #EXACT_MINUTE_LIMIT} keys; past that, the rest of the minute is, and the
     * part is the minute's count minus it (a batch published with one delay fills a few seconds of a
     * minute: one side is small). Only when both sides hold more is it estimated pro rata, within what
     * the two reads proved.
     */
    private long partOfMinute(long fromMs, long toMs) {
        long minute = DueCounts.minute(fromMs);
        return DueCounts.partOfBucket(minute * DueCounts.MINUTE_MS, DueCounts.MINUTE_MS,
                dueCounts.minutes(store, minute, minute + 1), fromMs, toMs, EXACT_MINUTE_LIMIT, this::countKeys);
    }

    /**
     * Messages due in {@code [fromMs, toMs]}, read from the keys: per topic hash one seek, then its keys
     * in the range; stops past {@code cap} (and answers more than it).
     */
    private long countKeys(long fromMs, long toMs, long cap) {
        if (fromMs > toMs) {
            return 0;
        }
        return store.read((d, snapshot) -> {
            long n = 0;
            try (org.rocksdb.ReadOptions ro = new org.rocksdb.ReadOptions().setSnapshot(snapshot);
                 org.rocksdb.RocksIterator it = d.rocks.newIterator(d.events, ro)) {
                it.seekToFirst();
                while (it.isValid() && n <= cap) {
                    long hash = ByteBuffer.wrap(it.key(), 0, 8).getLong();
                    it.seek(ByteBuffer.allocate(EventKey.LENGTH).putLong(hash).putLong(fromMs).putLong(0).array());
                    for (; n <= cap && it.isValid() && ByteBuffer.wrap(it.key(), 0, 8).getLong() == hash
                            && ByteBuffer.wrap(it.key(), 8, 8).getLong() <= toMs; it.next()) {
                        n++;
                    }
                    if (hash == -1L) {
                        break;
                    }
                    it.seek(EventKey.scanStart(hash + 1));
                }
            }
            return n;
        });
    }

    /** Every stored deferral (a delayed NACK of a durable group): key, group, until. */
    public void scanDeferred(DeferralVisitor visitor) {
        store.scan(d -> d.deferred, new byte[0], null, (k, v) -> visitor.visit(
                EventKey.fromBytes(Arrays.copyOf(k, EventKey.LENGTH)),
                new String(k, EventKey.LENGTH, k.length - EventKey.LENGTH, java.nio.charset.StandardCharsets.UTF_8),
                Db.decodeLong(v)));
    }

    /** The deliveries of the message to {@code group} the store counted (0: none). */
    public int deliveryCount(EventKey key, String group) {
        byte[] v = store.get(d -> d.deliveries, StoreKeys.receiptKey(key, group));
        return v == null ? 0 : ByteBuffer.wrap(v).getInt();
    }

    /** Every stored delivery count: key, group, count. */
    public void scanDeliveryCounts(CountVisitor visitor) {
        store.scan(d -> d.deliveries, new byte[0], null, (k, v) -> visitor.visit(
                EventKey.fromBytes(Arrays.copyOf(k, EventKey.LENGTH)),
                new String(k, EventKey.LENGTH, k.length - EventKey.LENGTH, java.nio.charset.StandardCharsets.UTF_8),
                ByteBuffer.wrap(v).getInt()));
    }

    /** The policy of a durable group, if one was configured. */
    public Optional<io.hourglass.core.proto.GroupPolicy> groupPolicy(String topic, String group) {
        byte[] v = store.get(d -> d.meta, StoreKeys.groupPolicyKey(topic, group));
        if (v == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(io.hourglass.core.proto.GroupPolicy.parseFrom(v));
        } catch (InvalidProtocolBufferException e) {
            throw new StorageException("corrupt group policy of " + topic + "/" + group, e);
        }
    }

    /** Whether any durable group has acknowledged the message (its receipts share its key as their prefix). */
    public boolean hasAnyReceipt(EventKey key) {
        byte[] k = key.toBytes();
        boolean[] found = {false};
        store.scan(d -> d.receipts, k, StoreBatch.successor(k), (rk, v) -> {
            found[0] = true;
            return false;
        });
        return found[0];
    }

    /**
     * Visits, in key order from {@code from}, the messages of one topic hash due at {@code nowMs},
     * each with the groups that hold a receipt for it, all read from one snapshot in one pass (a
     * second iterator walks the receipts in step, instead of a point read per message and group).
     * Returns the due time of the first key after {@code nowMs} (the next one to fall due), or
     * {@link Long#MAX_VALUE} when none follows or the visitor stopped the scan ({@link DueRange}).
     */
    public long scanDueFrom(long topicHash, EventKey from, long nowMs, DueRange.Visitor visitor) {
        return store.read((d, snapshot) -> DueRange.scan(d, snapshot, topicHash, from, nowMs, visitor));
    }

    /** Recurring messages not yet fired that are due by {@code nowMs}, in due order. */
    public void scanRecurringDue(long nowMs, Predicate<EventKey> visitor) {
        byte[] end = ByteBuffer.allocate(8).putLong(nowMs + 1).array();
        store.scan(d -> d.recurring, new byte[0], end, (k, v) -> visitor.test(
                EventKey.fromBytes(Arrays.copyOfRange(k, 8, 8 + EventKey.LENGTH))));
    }

    /** Whether recurring message {@code key} is still to fire. */
    public boolean armed(EventKey key, StoredMessage m) {
        return store.get(d -> d.recurring, StoreKeys.expiryKey(m.getDueAtMs(), key)) != null;
    }

    /** Expiry keys due by {@code nowMs}, from the index's {@link ExpiryFloor} on (the TTL janitor's sweep). */
    public void scanExpired(long nowMs, Predicate<EventKey> visitor) {
        byte[] end = ByteBuffer.allocate(8).putLong(nowMs + 1).array();
        ExpiryFloor floor = store.current(d -> d.expiryFloor);
        long from = floor.beginSweep(); // before the snapshot the sweep reads
        store.read((d, snapshot) -> {
            boolean same = d.expiryFloor == floor; // else the store was replaced: read it all, keep its floor
            long[] first = {nowMs + 1};
            d.iterate(snapshot, d.expiry, ByteBuffer.allocate(8).putLong(same ? from : 0).array(), end, false, (k, v) -> {
                first[0] = Math.min(first[0], ByteBuffer.wrap(k, 0, 8).getLong());
                return visitor.test(EventKey.fromBytes(Arrays.copyOfRange(k, 8, 8 + EventKey.LENGTH)));
            });
            if (same) {
                floor.endSweep(first[0]);
            }
            return null;
        });
    }

    /** Visits every stored message in key order (admin and tests; O(store)). */
    public void scanAll(ScanVisitor visitor) {
        store.scan(d -> d.events, new byte[0], null, (k, v) -> visitor.visit(EventKey.fromBytes(k), parse(v)));
    }

    /** Every message of one topic; messages of another topic with the same hash are skipped. */
    public void scanTopic(String topic, ScanVisitor visitor) {
        scanTopicFrom(topic, null, visitor);
    }

    /** {@link #scanTopic} from {@code from} on (inclusive; null: the topic's first key), seeking there. */
    public void scanTopicFrom(String topic, EventKey from, ScanVisitor visitor) {
        long hash = EventKey.topicHash(topic);
        byte[] end = hash == -1L ? null : EventKey.scanStart(hash + 1);
        byte[] start = from == null || from.topicHash() != hash ? EventKey.scanStart(hash) : from.toBytes();
        store.scan(d -> d.events, start, end, (k, v) -> {
            StoredMessage m = parse(v);
            return !m.getTopic().equals(topic) || visitor.visit(EventKey.fromBytes(k), m);
        });
    }

    /** Parses a stored message value (a scan's raw bytes). */
    public static StoredMessage parse(byte[] value) {
        try {
            return StoredMessage.parseFrom(value);
        } catch (InvalidProtocolBufferException e) {
            throw new StorageException("corrupt stored message: " + e.getMessage(), e);
        }
    }
}
