package io.hourglass.core.storage;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;

/**
 * The dispatcher's read of one topic's due range: the messages from a cursor up to now, each with
 * the groups whose receipt is stored, read in one ordered pass over {@code events} and
 * {@code receipts} (merge-join on the event key that prefixes every receipt key). The value bytes
 * are handed over unparsed, so a message nobody needs costs no decoding.
 */
public final class DueRange {
    /** Receives one due message; returns false to stop the scan. */
    @FunctionalInterface
    public interface Visitor {
        /** @param receiptGroups groups with a stored receipt for the message (shared, read-only; valid during the call) */
        boolean visit(EventKey key, byte[] value, List<String> receiptGroups);
    }

    private DueRange() {
    }

    static long scan(Db d, Snapshot snapshot, long topicHash, EventKey from, long nowMs, Visitor visitor) {
        byte[] start = from.toBytes();
        byte[] topicEnd = topicHash == -1L ? null : EventKey.scanStart(topicHash + 1);
        try (ReadOptions eventsRo = new ReadOptions().setSnapshot(snapshot);
             ReadOptions receiptsRo = new ReadOptions().setSnapshot(snapshot);
             Slice eventsUpper = topicEnd == null ? null : new Slice(topicEnd);
             Slice receiptsUpper = new Slice(EventKey.scanEnd(topicHash, nowMs))) {
            if (eventsUpper != null) {
                eventsRo.setIterateUpperBound(eventsUpper);
            }
            receiptsRo.setIterateUpperBound(receiptsUpper);
            try (RocksIterator events = d.rocks.newIterator(d.events, eventsRo);
                 RocksIterator receipts = d.rocks.newIterator(d.receipts, receiptsRo)) {
                receipts.seek(start);
                List<String> groups = new ArrayList<>(2);
                for (events.seek(start); events.isValid(); events.next()) {
                    byte[] k = events.key();
                    EventKey key = EventKey.fromBytes(k);
                    if (key.dueAtMs() > nowMs) {
                        return key.dueAtMs();
                    }
                    groups.clear();
                    for (; receipts.isValid(); receipts.next()) {
                        byte[] r = receipts.key();
                        int c = Arrays.compareUnsigned(r, 0, EventKey.LENGTH, k, 0, EventKey.LENGTH);
                        if (c > 0) {
                            break;
                        }
                        if (c == 0) {
                            groups.add(new String(r, EventKey.LENGTH, r.length - EventKey.LENGTH, StandardCharsets.UTF_8));
                        }
                    }
                    if (!visitor.visit(key, events.value(), groups)) {
                        return Long.MAX_VALUE;
                    }
                }
                events.status();
                receipts.status();
                return Long.MAX_VALUE;
            }
        } catch (RocksDBException e) {
            throw new StorageException("due scan failed: " + e.getMessage(), e);
        }
    }
}
