package io.hourglass.core.storage;

import org.rocksdb.MutableColumnFamilyOptions;
import org.rocksdb.RocksDBException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns blob garbage collection of the {@code events} column family on while deleted message bodies
 * make up much of its blob files, and off again once they do not.
 *
 * <p>A blob file is deleted as soon as every message in it is; in a queue that keeps up that is
 * every file, and collection has nothing to do. Collection is for files that a few long-lived
 * messages (delayed by a day, a backlog nobody consumes) keep alive among many deleted ones: it
 * moves the live bodies of the oldest files into new ones as compactions reach them. Left on, it
 * also moves a growing backlog's bodies on every compaction (10-20 % of a node's CPU under publish
 * load), where there is no garbage to win. So it runs only while garbage is at least
 * {@link #ENABLE_AT} of the blob bytes (space amplification 2x), until it is below {@link #DISABLE_AT}.
 * Physical layout only: each replica decides for itself, nothing replicated depends on it.
 */
final class BlobGarbage {
    private static final Logger LOG = LoggerFactory.getLogger(BlobGarbage.class);
    static final double ENABLE_AT = 0.5;
    static final double DISABLE_AT = 0.2;
    /** Commits between two looks at the blob files (two property reads). */
    static final int CHECK_EVERY_COMMITS = 1024;

    private final Db db;
    private int commits;
    private boolean collecting;

    BlobGarbage(Db db) {
        this.db = db;
    }

    /** Called after each commit; looks at the blob files every {@link #CHECK_EVERY_COMMITS}. */
    synchronized void afterCommit() {
        if (++commits >= CHECK_EVERY_COMMITS) {
            commits = 0;
            adjust();
        }
    }

    /** Looks now; returns whether collection is on afterwards. */
    synchronized boolean adjust() {
        try {
            long total = db.rocks.getLongProperty(db.events, "rocksdb.live-blob-file-size");
            long garbage = db.rocks.getLongProperty(db.events, "rocksdb.live-blob-file-garbage-size");
            double share = total == 0 ? 0 : (double) garbage / total;
            boolean want = collecting ? share >= DISABLE_AT : share >= ENABLE_AT;
            if (want != collecting) {
                db.rocks.setOptions(db.events, MutableColumnFamilyOptions.builder()
                        .setEnableBlobGarbageCollection(want).build());
                collecting = want;
                LOG.info("blob garbage collection {}: {} of {} blob bytes are deleted messages",
                        want ? "on" : "off", garbage, total);
            }
        } catch (RocksDBException e) {
            LOG.warn("cannot read or set blob garbage collection: {}", e.getMessage());
        }
        return collecting;
    }
}
