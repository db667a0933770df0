package io.hourglass.core.storage;

import io.hourglass.core.proto.StoredMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.FlushOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's RocksDB with the column families of DESIGN §2. Writes happen only through
 * {@link #commit(StoreBatch, TermIndex)}, which stores the batch and the applied log position
 * atomically, so after a crash the store holds exactly the entries up to {@link #appliedIndex()}.
 *
 * <p>This class owns the lifecycle (open, checkpoint, restore, digest, close) and the raw reads;
 * the domains' reads live in views of this package — {@link QueueStore} (messages, receipts,
 * due and expiry indexes: {@link #queue()}), {@code TopicRegistry}, {@link ProducerIds} — and in
 * the rooms' own view of the {@code rooms} column family.
 *
 * <p>Thread-safety: reads from any thread; {@code commit} from the single apply thread.
 */
public final class EventStore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventStore.class);

    private final Path dir;
    /** Swapped only by {@link #restoreFrom}, under the write lock; every use holds the read lock. */
    private volatile Db db;
    private final ReentrantReadWriteLock swap = new ReentrantReadWriteLock();
    private final TopicRegistry registry = new TopicRegistry();
    private final DueCounts dueCounts = new DueCounts();
    private final QueueStore queue = new QueueStore(this, dueCounts);
    private final TopicFigures figures = new TopicFigures(this, dueCounts);
    private final ProducerIds producerIds = new ProducerIds(this);
    private volatile TermIndex applied;
    /** The state machine's clock: the highest stamp applied (ms; 0 before any); no leader stamps below it. */
    private volatile long clockMs;
    private final List<Runnable> restoreListeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    private final long maxWalBytes;

    private EventStore(Path dir, long maxWalBytes) throws RocksDBException {
        this.dir = dir;
        this.maxWalBytes = maxWalBytes;
        this.db = new Db(dir, maxWalBytes);
        this.applied = readApplied();
        this.clockMs = readClock();
        registry.reload(this);
    }

    /** The applied position recorded in a store directory that is not open (a downloaded checkpoint). */
    public static TermIndex appliedIndexOf(Path dir) {
        try (EventStore s = new EventStore(dir, Db.MAX_TOTAL_WAL_BYTES)) {
            return s.applied;
        } catch (RocksDBException e) {
            throw new StorageException("cannot read checkpoint " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Deletes a closed store's directory (nothing when it does not exist). */
    public static void delete(Path dir) throws IOException {
        Db.deleteRecursively(dir);
    }

    /** Opens (creating if needed) the store in {@code dir}. */
    public static EventStore open(Path dir) {
        return open(dir, Db.MAX_TOTAL_WAL_BYTES);
    }

    /** @param maxWalBytes write-ahead log kept before a flush (see {@code Db.MAX_TOTAL_WAL_BYTES}) */
    static EventStore open(Path dir, long maxWalBytes) {
        try {
            Files.createDirectories(dir);
            EventStore store = new EventStore(dir, maxWalBytes);
            LOG.info("opened store {} at applied {}", dir, store.applied);
            return store;
        } catch (RocksDBException | IOException e) {
            throw new StorageException("cannot open the store in " + dir + ": " + e.getMessage(), e);
        }
    }

    public Path directory() {
        return dir;
    }

    public TermIndex appliedIndex() {
        return applied;
    }

    public StoreBatch newBatch() {
        return new StoreBatch(this, db);
    }

    /** The highest leader stamp applied (ms; 0 before any): see {@link #commit(StoreBatch, TermIndex, long)}. */
    public long clockMs() {
        return clockMs;
    }

    /** Writes the batch and the applied position in one atomic RocksDB write; the clock stays. */
    public void commit(StoreBatch batch, TermIndex position) {
        commit(batch, position, 0);
    }

    /** Writes batch, applied position and clock (raised to {@code stampMs} if later) in one RocksDB write. */
    public void commit(StoreBatch batch, TermIndex position, long stampMs) {
        boolean later = stampMs > clockMs;
        swap.readLock().lock();
        try {
            Db d = db;
            if (batch.db() != d) {
                throw new StorageException("the store was replaced while a batch was built", null);
            }
            batch.writeBatch().put(d.meta, Db.APPLIED_KEY, Db.encodeApplied(position));
            if (later) {
                batch.writeBatch().put(d.meta, Db.CLOCK_KEY, Db.encodeLong(stampMs));
            }
            synchronized (dueCounts) { // a count's build marks its snapshot between two commits
                d.rocks.write(d.writeOptions, batch.writeBatch());
                d.expiryFloor.added(batch.earliestExpiry()); // after the write: see ExpiryFloor
                dueCounts.committed(batch.dueChanges());
            }
            d.blobGarbage.afterCommit();
        } catch (RocksDBException e) {
            throw new StorageException("write at " + position + " failed: " + e.getMessage(), e);
        } finally {
            swap.readLock().unlock();
            batch.close();
        }
        registry.apply(batch.registryChanges());
        applied = position;
        if (later) {
            clockMs = stampMs;
        }
    }

    /** The scheduled queue's view of this store (messages, receipts, due and expiry indexes). */
    public QueueStore queue() {
        return queue;
    }

    /** The durable groups of a topic (empty when it has none). */
    public Set<String> durableGroups(String topic) {
        return registry.durableGroups(topic);
    }

    public Map<String, Set<String>> topicRegistry() {
        return registry.all();
    }

    /** Runs {@code body} over one consistent snapshot of the open database (same package). */
    <T> T read(BiFunction<Db, Snapshot, T> body) {
        swap.readLock().lock();
        Db d = db;
        Snapshot snapshot = d.rocks.getSnapshot();
        try {
            return body.apply(d, snapshot);
        } finally {
            d.rocks.releaseSnapshot(snapshot);
            swap.readLock().unlock();
        }
    }

    /** A topic's figures for operators, from counters and key indexes (see {@link TopicFigures}). */
    public TopicFigures topicFigures() {
        return figures;
    }

    /** The key a publish's producer id was stored under within the dedup window ({@link ProducerIds}). */
    public Optional<EventKey> keyOfProducerId(String producerId) {
        return producerIds.keyOf(producerId);
    }

    /** The cluster's shard count as its metadata group recorded it; empty when none is recorded (yet). */
    public java.util.OptionalInt clusterShards() {
        byte[] v = get(d -> d.meta, StoreKeys.CLUSTER_SHARDS_KEY);
        return v == null ? java.util.OptionalInt.empty()
                : java.util.OptionalInt.of(Integer.parseInt(new String(v, StandardCharsets.UTF_8)));
    }

    /** The client address a member registered through the log, if it did. */
    public Optional<String> peerAddress(String id) {
        byte[] v = get(d -> d.meta, StoreKeys.peerKey(id));
        return v == null ? Optional.empty() : Optional.of(new String(v, StandardCharsets.UTF_8));
    }

    interface RawVisitor {
        boolean visit(byte[] key, byte[] value);
    }

    void scan(Function<Db, ColumnFamilyHandle> family, byte[] start, byte[] endExclusive,
              RawVisitor visitor) {
        iterate(family, start, endExclusive, true, visitor);
    }

    /**
     * Visits the keys only (the value argument is null): a message body may sit in a blob file, and
     * reading each one made a scan of a million keys take 6 s instead of well under one.
     */
    void scanKeys(Function<Db, ColumnFamilyHandle> family, byte[] start, byte[] endExclusive,
                  java.util.function.Predicate<byte[]> visitor) {
        iterate(family, start, endExclusive, false, (k, v) -> visitor.test(k));
    }

    private void iterate(Function<Db, ColumnFamilyHandle> family, byte[] start, byte[] endExclusive,
                         boolean values, RawVisitor visitor) {
        read((d, snapshot) -> {
            d.iterate(snapshot, family.apply(d), start, endExclusive, values, visitor);
            return null;
        });
    }

    /** Reads one key of a column family chosen by the caller (same package). */
    byte[] get(Function<Db, ColumnFamilyHandle> family, byte[] key) {
        return current(d -> {
            try {
                return d.rocks.get(family.apply(d), key);
            } catch (RocksDBException e) {
                throw new StorageException("read failed: " + e.getMessage(), e);
            }
        });
    }

    /** Applies {@code body} to the open database, which no restore swaps meanwhile; no snapshot (same package). */
    <T> T current(Function<Db, T> body) {
        swap.readLock().lock();
        try {
            return body.apply(db);
        } finally {
            swap.readLock().unlock();
        }
    }

    /** Receives raw entries of the {@code rooms} column family; returns false to stop the scan. */
    @FunctionalInterface
    public interface RoomEntryVisitor {
        boolean visit(byte[] key, byte[] value);
    }

    /** One entry of the {@code rooms} column family (whose key layout the rooms package owns). */
    public Optional<byte[]> roomEntry(byte[] key) {
        return Optional.ofNullable(get(d -> d.rooms, key));
    }

    /**
     * Visits every entry of the {@code rooms} column family in key order, from one consistent
     * snapshot, and returns the applied position that snapshot holds: the scan shows exactly the
     * entries up to that index, so a reader can replay later changes without gaps or repeats.
     */
    public TermIndex scanRoomEntries(RoomEntryVisitor visitor) {
        return read((d, snapshot) -> {
            try (ReadOptions ro = new ReadOptions().setSnapshot(snapshot)) {
                byte[] appliedValue = d.rocks.get(d.meta, ro, Db.APPLIED_KEY);
                try (RocksIterator it = d.rocks.newIterator(d.rooms, ro)) {
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        if (!visitor.visit(it.key(), it.value())) {
                            break;
                        }
                    }
                    it.status();
                }
                return Db.decodeApplied(appliedValue);
            } catch (RocksDBException e) {
                throw new StorageException("rooms scan failed: " + e.getMessage(), e);
            }
        });
    }

    /**
     * The replicated state condensed: SHA-256 over every column family, and the position it covers;
     * {@code families} holds each family's own digest prefix and entry count, to tell where two differ.
     */
    public record Digest(TermIndex applied, String sha256, java.util.Map<String, String> families) {
    }

    /**
     * Digests every replicated column family from one RocksDB snapshot, so the digest and the
     * applied position it reports belong together ({@code StoreDigest}). O(store).
     */
    public Digest digest() {
        return read(StoreDigest::of);
    }

    /**
     * Makes everything written so far durable by syncing RocksDB's write-ahead log (one fsync), so a
     * restart recovers the store up to its current applied position. The way to take a snapshot:
     * waiting for a {@link #flush()} of the memtables held the apply thread — of every node at once,
     * at the same index — for ~0.7 s (RocksDB still flushes them on its own when they fill). A store
     * whose directory is gone (a data directory wiped under the running node) fails here, as the
     * flush did, since a sync of the open, unlinked log would succeed.
     */
    public void syncWal() {
        swap.readLock().lock();
        try {
            db.rocks.syncWal();
            if (!java.nio.file.Files.exists(dir.resolve("CURRENT"))) {
                throw new StorageException("the store's directory " + dir + " is gone", null);
            }
        } catch (RocksDBException e) {
            throw new StorageException("syncing the store's write-ahead log failed: " + e.getMessage(), e);
        } finally {
            swap.readLock().unlock();
        }
    }

    /** Flushes memtables to SST files so the applied state no longer depends on the WAL. */
    public void flush() {
        swap.readLock().lock();
        try (FlushOptions fo = new FlushOptions().setWaitForFlush(true)) {
            db.rocks.flush(fo, db.handles);
        } catch (RocksDBException e) {
            throw new StorageException("flush failed: " + e.getMessage(), e);
        } finally {
            swap.readLock().unlock();
        }
    }

    /** Writes a consistent copy of the store to {@code target} (which must not exist). */
    public void checkpoint(Path target) {
        swap.readLock().lock();
        try (Checkpoint cp = Checkpoint.create(db.rocks)) {
            cp.createCheckpoint(target.toString());
        } catch (RocksDBException e) {
            throw new StorageException("checkpoint to " + target + " failed: " + e.getMessage(), e);
        } finally {
            swap.readLock().unlock();
        }
    }

    /**
     * Replaces the whole store with a checkpoint (a follower installing the leader's state).
     * The checkpoint directory is moved into place; afterwards the store reports the
     * checkpoint's applied position. Readers wait while the swap runs.
     */
    public void restoreFrom(Path checkpoint) {
        swap.writeLock().lock();
        try {
            TermIndex before = applied;
            db.close();
            Path old = dir.resolveSibling(dir.getFileName() + ".replaced");
            Db.deleteRecursively(old);
            Files.move(dir, old);
            Files.move(checkpoint, dir);
            db = new Db(dir, maxWalBytes);
            applied = readApplied();
            clockMs = readClock();
            registry.reload(this);
            dueCounts.reset();
            Db.deleteRecursively(old);
            LOG.info("store {} replaced by a checkpoint: applied {} -> {}", dir, before, applied);
        } catch (RocksDBException | IOException e) {
            throw new StorageException("cannot install checkpoint " + checkpoint + ": " + e.getMessage(), e);
        } finally {
            swap.writeLock().unlock();
        }
        restoreListeners.forEach(Runnable::run);
    }

    /** Runs {@code listener} after each {@link #restoreFrom}, once readers see the new store. */
    public void addRestoreListener(Runnable listener) {
        restoreListeners.add(listener);
    }

    private long readClock() {
        byte[] v = get(d -> d.meta, Db.CLOCK_KEY);
        return v == null ? 0 : Db.decodeLong(v);
    }

    private TermIndex readApplied() {
        return Db.decodeApplied(get(d -> d.meta, Db.APPLIED_KEY));
    }

    @Override
    public void close() {
        swap.writeLock().lock();
        try {
            db.close();
        } finally {
            swap.writeLock().unlock();
        }
        LOG.info("closed store {} at applied {}", dir, applied);
    }
}
