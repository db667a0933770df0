package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.CompactRangeOptions;
import org.rocksdb.FlushOptions;

/**
 * The store's RocksDB options: whole-key memtable bloom filters (the producer-id lookup fell from
 * 4.5 % to 0.8 % of a leader's CPU under publish-and-consume load with them), message bodies in blob
 * files that are deleted once their messages are, and no immediate rewrite of last-level files.
 */
@Timeout(60)
class DbOptionsTest {
    @TempDir
    Path dir;

    @Test
    void everyColumnFamilyHasAWholeKeyMemtableBloomFilter() throws Exception {
        Db db = new Db(dir);
        try {
            assertTrue(db.cfOptions.memtableWholeKeyFiltering());
            assertEquals(Db.MEMTABLE_BLOOM_RATIO, db.cfOptions.memtablePrefixBloomSizeRatio());
            assertTrue(Db.MEMTABLE_BLOOM_RATIO > 0);
            assertTrue(db.eventsOptions.memtableWholeKeyFiltering(), "the events family starts from the same options");
        } finally {
            db.close();
        }
    }

    @Test
    void messageBodiesLiveInBlobFilesThatGoAwayWithTheirMessages() throws Exception {
        Db db = new Db(dir);
        try {
            byte[] body = new byte[1024];
            Arrays.fill(body, (byte) 7);
            for (int i = 0; i < 2000; i++) {
                db.rocks.put(db.events, key(i), body);
            }
            db.rocks.put(db.events, key(5000), new byte[16]);
            flush(db);
            assertTrue(count(".blob") > 0, "bodies of 1 KiB were written to a blob file");
            assertArrayEquals(body, db.rocks.get(db.events, key(1234)), "read back through the blob reference");
            assertEquals(16, db.rocks.get(db.events, key(5000)).length, "a small value stays inline");

            for (int i = 0; i < 2000; i++) {
                db.rocks.delete(db.events, key(i));
            }
            flush(db);
            db.rocks.compactRange(db.events);
            assertEquals(0, count(".blob"), "a blob file whose messages are all deleted is deleted");
        } finally {
            db.close();
        }
    }

    @Test
    void blobGarbageCollectionRunsOnlyWhileDeletedBodiesFillTheBlobFiles() throws Exception {
        Db db = new Db(dir);
        try {
            byte[] body = new byte[1024];
            // The oldest blob file: 2 000 bodies of which one lives on (a message delayed by a day).
            for (int i = 0; i < 2000; i++) {
                db.rocks.put(db.events, key(i), body);
            }
            flush(db);
            for (int f = 1; f <= 3; f++) {
                for (int i = 0; i < 100; i++) {
                    db.rocks.put(db.events, key(f * 10_000 + i), body);
                }
                flush(db);
            }
            assertEquals(4, count(".blob"));
            assertFalse(db.blobGarbage.adjust(), "no garbage yet: a backlog's bodies are left where they are");
            Path oldest = oldestBlob();

            for (int i = 1; i < 2000; i++) {
                db.rocks.delete(db.events, key(i));
            }
            flush(db);
            db.rocks.compactRange(db.events);
            assertTrue(Files.exists(oldest), "one live message keeps the oldest file, 99.9 % garbage");
            assertTrue(db.blobGarbage.adjust(), "most blob bytes are garbage: collection on");

            try (CompactRangeOptions all = new CompactRangeOptions()
                    .setBottommostLevelCompaction(CompactRangeOptions.BottommostLevelCompaction.kForce)) {
                db.rocks.compactRange(db.events, null, null, all);
            }
            assertFalse(Files.exists(oldest), "the live body moved out and the oldest file went");
            assertEquals(1024, db.rocks.get(db.events, key(0)).length, "the live message reads as before");
            assertFalse(db.blobGarbage.adjust(), "garbage is gone: collection off again");
        } finally {
            db.close();
        }
    }

    @Test
    void lastLevelFilesAreNotRewrittenRightAwayForSnapshotsSake() throws Exception {
        Db db = new Db(dir);
        db.close();
        try (Stream<Path> files = Files.list(dir)) {
            Path options = files.filter(p -> p.getFileName().toString().startsWith("OPTIONS-")).findFirst().orElseThrow();
            assertTrue(Files.readString(options).contains(
                    "bottommost_file_compaction_delay=" + Db.BOTTOMMOST_COMPACTION_DELAY_S));
        }
    }

    private static byte[] key(int i) {
        return ByteBuffer.allocate(EventKey.LENGTH).putLong(1).putLong(1000).putLong(i).array();
    }

    private static void flush(Db db) throws Exception {
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            db.rocks.flush(fo, db.events);
        }
    }

    private Path oldestBlob() throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".blob"))
                    .min(java.util.Comparator.comparing(p -> p.getFileName().toString())).orElseThrow();
        }
    }

    private long count(String suffix) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().endsWith(suffix)).count();
        }
    }
}
