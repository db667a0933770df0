package io.hourglass.core.storage;

import org.rocksdb.PerfContext;
import org.rocksdb.PerfLevel;
import org.rocksdb.RocksDB;

/** Counts the tombstones RocksDB skips while a piece of code runs on this thread (its perf context). */
final class Tombstones {
    private Tombstones() {
    }

    static long skippedDuring(EventStore store, Runnable body) {
        RocksDB rocks = store.newBatch().db().rocks;
        rocks.setPerfLevel(PerfLevel.ENABLE_COUNT);
        try {
            PerfContext perf = rocks.getPerfContext();
            perf.reset();
            body.run();
            return perf.getInternalDeleteSkippedCount();
        } finally {
            rocks.setPerfLevel(PerfLevel.DISABLE);
        }
    }
}
