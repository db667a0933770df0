package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Forgetting expired producer ids reads only live ids: the ids forgotten before stay in RocksDB as
 * tombstones until a compaction drops them, and a forget that walked them, on every entry, made
 * publish latency at a steady 1 000 msg/s rise tenfold once the first ids expired (after the window).
 */
class ProducerIdsForgetTest {
    private static final int FORGOTTEN = 10_000;

    @TempDir
    Path dir;

    @Test
    void aForgetSkipsTheTombstonesOfIdsForgottenBefore() {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            ProducerIds ids = new ProducerIds(store);
            EventKey key = EventKey.of("t", 1, 1, 0);
            long index = 0;
            for (int e = 0; e < FORGOTTEN / 100; e++) {
                StoreBatch batch = store.newBatch();
                for (int i = 0; i < 100; i++) {
                    ids.remember(batch, "p-" + e + "-" + i, key, 1_000 + e);
                }
                store.commit(batch, new TermIndex(1, ++index));
            }
            long late = 1_000 + ProducerIds.WINDOW_MS + FORGOTTEN;
            int forgotten = 0;
            while (forgotten < FORGOTTEN) {
                StoreBatch batch = store.newBatch();
                int n = ids.forgetExpired(batch, late);
                assertTrue(n > 0, "a forget found nothing with " + (FORGOTTEN - forgotten) + " ids expired");
                forgotten += n;
                store.commit(batch, new TermIndex(1, ++index));
            }
            StoreBatch fresh = store.newBatch();
            ids.remember(fresh, "fresh", key, late);
            store.commit(fresh, new TermIndex(1, ++index));

            long skipped = Tombstones.skippedDuring(store, () -> assertEquals(1,
                    ids.forgetExpired(store.newBatch(), late + ProducerIds.WINDOW_MS + 1), "the fresh id expired"));
            assertTrue(skipped < 100, "the forget walked " + skipped + " tombstones of the " + FORGOTTEN
                    + " ids forgotten before");
            assertTrue(ids.keyOf("fresh").isPresent(), "the fresh id is forgotten only once its batch is committed");
        }
    }
}
