package io.hourglass.core.storage;

import com.google.protobuf.ByteString;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Optional;

/**
 * Producer-id deduplication, the {@code dedup} column family: a publish or room send retried with
 * the same producer id within {@link #WINDOW_MS} (measured in leader stamps) is answered with the
 * first attempt's key instead of being stored twice. Both the queue's and the rooms' appliers use
 * it; every entry that remembers ids calls {@link #forgetExpired} first.
 *
 * <p>Layout: {@code 'p'·id → eventKey·stamp} (publishes), {@code 'r'·id → roomKey·stamp} (room
 * sends), and the time index {@code 't'·stamp·id → ∅} that forgetting walks in stamp order.
 * Reads from any thread; writes only into the apply thread's {@link StoreBatch}.
 */
public final class ProducerIds {
    /**
     * How long a producer id is remembered. A constant, not config, because every replica must
     * forget at the same entry.
     */
    public static final long WINDOW_MS = 15 * 60_000;
    /** At most this many ids are forgotten per entry, so one entry's work stays bounded. */
    static final int FORGET_PER_ENTRY = 1024;

    private final EventStore store;

    public ProducerIds(EventStore store) {
        this.store = store;
    }

    /** The key a publish's producer id was stored under, if it was stored within the window. */
    public Optional<EventKey> keyOf(String producerId) {
        return keyOf(ByteString.copyFromUtf8(producerId));
    }

    /** {@link #keyOf(String)} of an id as its UTF-8 bytes, as a log entry carries it (no decoding). */
    public Optional<EventKey> keyOf(ByteString producerId) {
        byte[] v = store.get(d -> d.dedup, publishKey(producerId));
        return v == null ? Optional.empty() : Optional.of(EventKey.fromBytes(Arrays.copyOf(v, EventKey.LENGTH)));
    }

    /** The room key a room send's producer id was stored under, if it was stored within the window. */
    public Optional<byte[]> roomKeyOf(String producerId) {
        byte[] v = store.get(d -> d.dedup, roomKey(producerId));
        return v == null ? Optional.empty() : Optional.of(Arrays.copyOf(v, v.length - 8));
    }

    /** Remembers that a publish's {@code producerId} was stored as {@code key} at {@code stampMs}. */
    public void remember(StoreBatch batch, String producerId, EventKey key, long stampMs) {
        remember(batch, ByteString.copyFromUtf8(producerId), key, stampMs);
    }

    /** {@link #remember(StoreBatch, String, EventKey, long)} of an id as its UTF-8 bytes. */
    public void remember(StoreBatch batch, ByteString producerId, EventKey key, long stampMs) {
        Db db = batch.db();
        timeKeyAdded(db, stampMs);
        batch.put(db.dedup, publishKey(producerId),
                ByteBuffer.allocate(EventKey.LENGTH + 8).put(key.toBytes()).putLong(stampMs).array());
        batch.put(db.dedup, timeKey(stampMs, producerId), new byte[0]);
    }

    /** Remembers that a room send's {@code producerId} was stored under {@code roomKey} at {@code stampMs}. */
    public void rememberRoom(StoreBatch batch, String producerId, byte[] roomKey, long stampMs) {
        Db db = batch.db();
        timeKeyAdded(db, stampMs);
        batch.put(db.dedup, roomKey(producerId),
                ByteBuffer.allocate(roomKey.length + 8).put(roomKey).putLong(stampMs).array());
        batch.put(db.dedup, timeKey(stampMs, producerId), new byte[0]);
    }

    /**
     * Forgets ids remembered longer than the window before {@code stampMs}, at most
     * {@link #FORGET_PER_ENTRY} of them, oldest first; returns how many. The scan that finds them
     * also notes the oldest id it leaves, so that the entries after it, until the window reaches
     * that id, read nothing (a scan per entry was 14-16 % of the apply thread at a paced 1 000
     * msg/s, nearly always finding nothing). Same ids forgotten at the same entry on every replica,
     * whether it knew the oldest or had to look (after a restart, a checkpoint).
     */
    public int forgetExpired(StoreBatch batch, long stampMs) {
        Db db = batch.db();
        long cutoff = stampMs - WINDOW_MS;
        if (cutoff <= db.dedupOldestStamp) {
            return 0; // nothing remembered before the cutoff
        }
        int[] n = {0};
        long[] oldestLeft = {Long.MAX_VALUE};
        // From the oldest id known to be left, not from the index's start: every id forgotten
        // before lies below it as a tombstone until a compaction drops it, and a scan from the
        // start walked all of them, on every entry (at 1 000 msg/s, once the first ids expired
        // after WINDOW_MS, publish latency rose tenfold within minutes and kept rising).
        long from = db.dedupOldestStamp;
        byte[] start = from == Long.MIN_VALUE ? new byte[] {'t'} : timeKey(from, "");
        byte[] end = {'t' + 1};
        store.scan(d -> d.dedup, start, end, (k, v) -> {
            long stamp = ByteBuffer.wrap(k, 1, 8).getLong();
            if (stamp >= cutoff || n[0] == FORGET_PER_ENTRY) {
                oldestLeft[0] = stamp;
                return false;
            }
            ByteString producerId = ByteString.copyFrom(k, 9, k.length - 9);
            batch.delete(db.dedup, publishKey(producerId));
            batch.delete(db.dedup, roomKey(producerId));
            batch.delete(db.dedup, timeKey(stamp, producerId));
            n[0]++;
            return true;
        });
        db.dedupOldestStamp = oldestLeft[0]; // this batch leaves nothing older
        return n[0];
    }

    /** A time-index key at {@code stampMs} joins the batch: it may be the oldest now. */
    private static void timeKeyAdded(Db db, long stampMs) {
        if (db.dedupOldestStamp != Long.MIN_VALUE && stampMs < db.dedupOldestStamp) {
            db.dedupOldestStamp = stampMs;
        }
    }

    private static byte[] publishKey(ByteString producerId) {
        return prefixed((byte) 'p', producerId);
    }

    private static byte[] roomKey(String producerId) {
        return roomKey(ByteString.copyFromUtf8(producerId));
    }

    private static byte[] roomKey(ByteString producerId) {
        return prefixed((byte) 'r', producerId);
    }

    private static byte[] prefixed(byte prefix, ByteString producerId) {
        byte[] key = new byte[1 + producerId.size()];
        key[0] = prefix;
        producerId.copyTo(key, 1);
        return key;
    }

    private static byte[] timeKey(long stampMs, String producerId) {
        return timeKey(stampMs, ByteString.copyFromUtf8(producerId));
    }

    private static byte[] timeKey(long stampMs, ByteString producerId) {
        byte[] key = ByteBuffer.allocate(9 + producerId.size()).put((byte) 't').putLong(stampMs).array();
        producerId.copyTo(key, 9);
        return key;
    }
}
