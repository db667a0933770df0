package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.StoredMessage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TTL janitor's sweep of the expiry index skips what earlier sweeps already passed: each deleted
 * message leaves its expiry key as a tombstone until a compaction, and a sweep from the index's start
 * walked all of them every minute. And it never skips a live key, however it was added.
 */
class ExpirySweepTest {
    private static final int DELETED = 10_000;

    @TempDir
    Path dir;

    @Test
    void aSweepSkipsTheTombstonesEarlierSweepsPassed() {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            long[] index = {0};
            List<EventKey> keys = new ArrayList<>();
            StoreBatch batch = store.newBatch();
            for (int i = 0; i < DELETED; i++) {
                EventKey key = EventKey.of("t", 1_000, 1, i);
                batch.putMessage(key, message(1_000 + i));
                keys.add(key);
            }
            store.commit(batch, new TermIndex(1, ++index[0]));
            assertEquals(DELETED, sweep(store, 1_000 + DELETED), "every message expired");
            StoreBatch deletes = store.newBatch();
            for (int i = 0; i < DELETED; i++) {
                deletes.deleteMessage(keys.get(i), message(1_000 + i));
            }
            store.commit(deletes, new TermIndex(1, ++index[0]));
            assertEquals(0, sweep(store, 2_000 + DELETED), "all deleted"); // walks the tombstones once

            StoreBatch later = store.newBatch();
            later.putMessage(EventKey.of("t", 5_000_000, 9, 0), message(5_000_001));
            store.commit(later, new TermIndex(1, ++index[0]));
            long skipped = Tombstones.skippedDuring(store,
                    () -> assertEquals(1, sweep(store, 5_000_001), "the later message expired"));
            assertTrue(skipped < 100, "the sweep walked " + skipped + " tombstones an earlier sweep had passed");
        }
    }

    @Test
    void aKeyAddedBelowTheFloorIsStillFound() {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            assertEquals(0, sweep(store, 10_000), "nothing stored"); // the floor moves past 10 000
            StoreBatch batch = store.newBatch();
            batch.putMessage(EventKey.of("t", 100, 1, 0), message(500));
            store.commit(batch, new TermIndex(1, 1));
            assertEquals(1, sweep(store, 10_000), "a message expiring below the floor, written after the sweep");
        }
    }

    private static int sweep(EventStore store, long nowMs) {
        int[] n = {0};
        store.queue().scanExpired(nowMs, key -> {
            n[0]++;
            return true;
        });
        return n[0];
    }

    private static StoredMessage message(long expiresAtMs) {
        return StoredMessage.newBuilder().setTopic("t").setPayload(ByteString.copyFromUtf8("x")).setExpiresAtMs(expiresAtMs)
                .build();
    }
}
