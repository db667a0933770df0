package io.hourglass.core.storage;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One open RocksDB with the column families of DESIGN §2. Immutable once open; {@link EventStore}
 * swaps a whole new one in when it installs a checkpoint, so a handle is only used under the
 * store's read lock.
 */
final class Db {
    private static final Logger LOG = LoggerFactory.getLogger(Db.class);
    /** Column families after the default one, in handle order. */
    static final List<String> COLUMN_FAMILIES = List.of("events", "expiry", "receipts", "meta", "rooms", "dedup",
            "security", "keys", "deferred", "deliveries", "recurring");
    /** The {@code meta} key of the applied log position, written in every commit's batch. */
    static final byte[] APPLIED_KEY = "applied".getBytes(StandardCharsets.UTF_8);
    /** The state machine's clock: the highest leader stamp applied (see EventStore#clockMs). */
    static final byte[] CLOCK_KEY = "clock".getBytes(StandardCharsets.UTF_8);

    static {
        RocksDB.loadLibrary();
    }

    /** Memtable bloom filter size as a share of the memtable (RocksDB's recommended 0.1 = 10 %). */
    static final double MEMTABLE_BLOOM_RATIO = 0.1;

    /** Message bodies (stored values of the {@code events} column family) this large go to blob files. */
    static final long MIN_BLOB_BYTES = 256;
    /**
     * How long a file in the last level waits before RocksDB rewrites it only to clear sequence
     * numbers that an open snapshot kept (seconds). Without a delay each flush into an empty level
     * was rewritten once right away; queue data is mostly deleted long before an hour.
     */
    static final long BOTTOMMOST_COMPACTION_DELAY_S = 3600;

    /**
     * Write-ahead log RocksDB keeps before it flushes the column families that pin its oldest file.
     * A file goes only once every family with data in it has flushed, and the small ones (the
     * applied index in {@code meta}, written with every entry) fill their memtables in hours: half an hour
     * at 1 000 msg/s left 45 files, 2.4 GB, on a node whose queue was empty (RocksDB's own bound is
     * 4x all memtables, ~6 GB here), all replayed at the next start.
     */
    static final long MAX_TOTAL_WAL_BYTES = 256L << 20;

    /** Bytes written to a file before RocksDB starts writing them out in the background (see the constructor). */
    static final long BYTES_PER_SYNC = 1L << 20;

    final DBOptions dbOptions;
    final ColumnFamilyOptions cfOptions;
    /** The {@code events} column family's: {@link #cfOptions} plus blob files for message bodies. */
    final ColumnFamilyOptions eventsOptions;
    private final BloomFilter bloom;
    final WriteOptions writeOptions;
    final RocksDB rocks;
    final BlobGarbage blobGarbage;
    final List<ColumnFamilyHandle> handles = new ArrayList<>();
    final ColumnFamilyHandle events;
    final ColumnFamilyHandle expiry;
    /** Where the TTL janitor's sweep of {@link #expiry} starts. */
    final ExpiryFloor expiryFloor = new ExpiryFloor();
    final ColumnFamilyHandle receipts;
    final ColumnFamilyHandle meta;
    final ColumnFamilyHandle rooms;
    final ColumnFamilyHandle dedup;
    /**
     * Apply thread only: no key of the {@code dedup} time index is older than this stamp (it is
     * the oldest one's, or {@code Long.MAX_VALUE} for none); {@code Long.MIN_VALUE} when unknown.
     * Kept by {@link ProducerIds}; a new DB (opened, restored) starts unknown.
     */
    long dedupOldestStamp = Long.MIN_VALUE;
    final ColumnFamilyHandle security;
    /** Schedule keys: {@code xxhash64(topic) · key} → the event key of the message stored under it. */
    final ColumnFamilyHandle keys;
    /** Delayed NACKs of durable groups: {@code event key · group} → until (epoch ms, 8 bytes). */
    final ColumnFamilyHandle deferred;
    /** Deliveries to durable groups not yet acknowledged: {@code event key · group} → count (4 bytes). */
    final ColumnFamilyHandle deliveries;
    /** Recurring messages not yet fired: {@code due (8 bytes) · event key} → empty. */
    final ColumnFamilyHandle recurring;

    Db(Path dir) throws RocksDBException {
        this(dir, MAX_TOTAL_WAL_BYTES);
    }

    /** @param maxWalBytes see {@link #MAX_TOTAL_WAL_BYTES} */
    Db(Path dir, long maxWalBytes) throws RocksDBException {
        // The write-ahead log and the files a flush writes are handed to the disk a megabyte at a time
        // as they grow (sync_file_range, not waited for), instead of all at once: with several column
        // families RocksDB fsyncs the closed log before it flushes a memtable, and that sync of ~60 MB
        // of dirty pages stalled the disk for 120-150 ms, and the Raft log's fsyncs with it, on every
        // node at the same moment (they apply the same entries, so they switch memtables together).
        dbOptions = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true)
                .setMaxTotalWalSize(maxWalBytes).setWalBytesPerSync(BYTES_PER_SYNC).setBytesPerSync(BYTES_PER_SYNC);
        // Bloom filters (10 bits a key, ~1 % false positives): most point reads ask for keys that do
        // not exist — the dedup index for every published message's producer id, receipts of groups
        // that have not acknowledged yet — and without a filter each such miss reads an index and a
        // data block of every SST file that could hold it.
        bloom = new BloomFilter(10);
        // The same misses reach the memtable first, where each walked the skip list (the producer-id
        // lookup alone was 4.5 % of a leader's CPU under publish-and-consume load): a bloom filter
        // over the memtable's whole keys answers most of them at once.
        cfOptions = baseOptions().setTableFormatConfig(new BlockBasedTableConfig().setFilterPolicy(bloom))
                .setMemtablePrefixBloomSizeRatio(MEMTABLE_BLOOM_RATIO).setMemtableWholeKeyFiltering(true);
        // Message bodies of MIN_BLOB_BYTES and more go to blob files when a memtable is flushed, and
        // the SST files keep only keys and blob references: compactions, which rewrite SST files
        // level by level, then move ~50 bytes per message instead of the whole body, and no longer
        // compress and decompress bodies on every pass (compaction had grown to 30-40 % of a node's
        // CPU under publish load). A blob file whose messages are all gone is deleted; collection of
        // files that a few live messages keep (see BlobGarbage) starts off and is switched as needed,
        // and while on, forces compactions of the oldest files once half their bytes are garbage.
        eventsOptions = new ColumnFamilyOptions(cfOptions).setEnableBlobFiles(true).setMinBlobSize(MIN_BLOB_BYTES)
                .setBlobGarbageCollectionForceThreshold(BlobGarbage.ENABLE_AT);
        // WAL on, no fsync per write: the Raft log is the durable record (RATIS-NOTES.md).
        writeOptions = new WriteOptions().setSync(false);
        List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
        descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfOptions));
        for (String name : COLUMN_FAMILIES) {
            descriptors.add(new ColumnFamilyDescriptor(name.getBytes(StandardCharsets.UTF_8),
                    name.equals("events") ? eventsOptions : cfOptions));
        }
        rocks = RocksDB.open(dbOptions, dir.toString(), descriptors, handles);
        blobGarbage = new BlobGarbage(this);
        blobGarbage.adjust();
        events = handles.get(1);
        expiry = handles.get(2);
        receipts = handles.get(3);
        meta = handles.get(4);
        rooms = handles.get(5);
        dedup = handles.get(6);
        security = handles.get(7);
        keys = handles.get(8);
        deferred = handles.get(9);
        deliveries = handles.get(10);
        recurring = handles.get(11);
    }

    /** Options every column family starts from; some exist only as RocksDB option strings. */
    private static ColumnFamilyOptions baseOptions() {
        java.util.Properties p = new java.util.Properties();
        p.setProperty("bottommost_file_compaction_delay", Long.toString(BOTTOMMOST_COMPACTION_DELAY_S));
        ColumnFamilyOptions o = ColumnFamilyOptions.getColumnFamilyOptionsFromProps(p);
        if (o == null) {
            throw new IllegalStateException("RocksDB refused bottommost_file_compaction_delay");
        }
        return o;
    }

    /** The applied position a stored {@code meta} value holds; the initial one when there is none. */
    static TermIndex decodeApplied(byte[] value) {
        if (value == null) {
            return TermIndex.INITIAL;
        }
        ByteBuffer b = ByteBuffer.wrap(value);
        return new TermIndex(b.getLong(), b.getLong());
    }

    static byte[] encodeLong(long v) {
        return ByteBuffer.allocate(8).putLong(v).array();
    }

    static long decodeLong(byte[] value) {
        return ByteBuffer.wrap(value).getLong();
    }

    static byte[] encodeApplied(TermIndex position) {
        return ByteBuffer.allocate(16).putLong(position.term()).putLong(position.index()).array();
    }

    void close() {
        try {
            rocks.flushWal(true);
        } catch (RocksDBException e) {
            LOG.warn("WAL flush on close failed: {}", e.getMessage());
        }
        handles.forEach(ColumnFamilyHandle::close);
        rocks.close();
        writeOptions.close();
        eventsOptions.close();
        cfOptions.close();
        bloom.close();
        dbOptions.close();
    }

    /** Deletes a directory tree (nothing when it does not exist). */
    static void deleteRecursively(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var files = Files.walk(p)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        }
    }

    /**
     * Visits {@code family}'s keys in {@code [start, endExclusive)} (null: to its end) as of
     * {@code snapshot}, with their values when {@code values} (else null), until the visitor says stop.
     */
    void iterate(org.rocksdb.Snapshot snapshot, ColumnFamilyHandle family, byte[] start, byte[] endExclusive,
                 boolean values, EventStore.RawVisitor visitor) {
        try (org.rocksdb.ReadOptions ro = new org.rocksdb.ReadOptions().setSnapshot(snapshot);
             org.rocksdb.Slice upper = endExclusive == null ? null : new org.rocksdb.Slice(endExclusive)) {
            if (upper != null) {
                ro.setIterateUpperBound(upper);
            }
            try (org.rocksdb.RocksIterator it = rocks.newIterator(family, ro)) {
                for (it.seek(start); it.isValid(); it.next()) {
                    if (!visitor.visit(it.key(), values ? it.value() : null)) {
                        break;
                    }
                }
                it.status();
            }
        } catch (RocksDBException e) {
            throw new StorageException("scan failed: " + e.getMessage(), e);
        }
    }
}
