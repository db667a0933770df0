package io.hourglass.core.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.hourglass.core.proto.StoredMessage;
import io.hourglass.core.proto.TopicGroups;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.Snapshot;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's RocksDB with the column families of DESIGN §2. Writes happen only through
 * {@link #commit(StoreBatch, TermIndex)}, which stores the batch and the applied log position
 * atomically, so after a crash the store holds exactly the entries up to {@link #appliedIndex()}.
 *
 * <p>Thread-safety: reads from any thread; {@code commit} from the single apply thread.
 */
public final class EventStore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventStore.class);
    static final byte[] APPLIED_KEY = "applied".getBytes(StandardCharsets.UTF_8);
    static final String TOPIC_PREFIX = "topic/";

    static {
        RocksDB.loadLibrary();
    }

    private final Path dir;
    /** Swapped only by {@link #restoreFrom}, under the write lock; every use holds the read lock. */
    private volatile Db db;
    private final java.util.concurrent.locks.ReentrantReadWriteLock swap = new java.util.concurrent.locks.ReentrantReadWriteLock();
    /** Topic → durable groups; replaced (never mutated) after each commit that changes it. */
    private final Map<String, Set<String>> registry = new ConcurrentHashMap<>();
    private volatile TermIndex applied;

    /** One open RocksDB with its column families. */
    static final class Db {
        final DBOptions dbOptions;
        final ColumnFamilyOptions cfOptions;
        final WriteOptions writeOptions;
        final RocksDB rocks;
        final List<ColumnFamilyHandle> handles = new ArrayList<>();
        final ColumnFamilyHandle events;
        final ColumnFamilyHandle expiry;
        final ColumnFamilyHandle receipts;
        final ColumnFamilyHandle meta;
        final ColumnFamilyHandle rooms;
        final ColumnFamilyHandle dedup;

        Db(Path dir) throws RocksDBException {
            dbOptions = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true);
            cfOptions = new ColumnFamilyOptions();
            // WAL on, no fsync per write: the Raft log is the durable record (RATIS-NOTES.md).
            writeOptions = new WriteOptions().setSync(false);
            List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
            descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfOptions));
            for (String name : COLUMN_FAMILIES) {
                descriptors.add(new ColumnFamilyDescriptor(name.getBytes(StandardCharsets.UTF_8), cfOptions));
            }
            rocks = RocksDB.open(dbOptions, dir.toString(), descriptors, handles);
            events = handles.get(1);
            expiry = handles.get(2);
            receipts = handles.get(3);
            meta = handles.get(4);
            rooms = handles.get(5);
            dedup = handles.get(6);
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
            cfOptions.close();
            dbOptions.close();
        }
    }

    /** Column families after the default one, in handle order. */
    static final List<String> COLUMN_FAMILIES = List.of("events", "expiry", "receipts", "meta", "rooms", "dedup");

    private EventStore(Path dir) throws RocksDBException {
        this.dir = dir;
        this.db = new Db(dir);
        this.applied = readApplied();
        loadRegistry();
    }

    /** The applied position recorded in a store directory that is not open (a downloaded checkpoint). */
    public static TermIndex appliedIndexOf(Path dir) {
        try (EventStore s = new EventStore(dir)) {
            return s.applied;
        } catch (RocksDBException e) {
            throw new StorageException("cannot read checkpoint " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Opens (creating if needed) the store in {@code dir}. */
    public static EventStore open(Path dir) {
        try {
            Files.createDirectories(dir);
            EventStore store = new EventStore(dir);
            LOG.info("opened store {} at applied {}", dir, store.applied);
            return store;
        } catch (RocksDBException | java.io.IOException e) {
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

    /** Writes the batch and the applied position in one atomic RocksDB write. */
    public void commit(StoreBatch batch, TermIndex position) {
        swap.readLock().lock();
        try {
            Db d = db;
            if (batch.db() != d) {
                throw new StorageException("the store was replaced while a batch was built", null);
            }
            batch.writeBatch().put(d.meta, APPLIED_KEY,
                    ByteBuffer.allocate(16).putLong(position.term()).putLong(position.index()).array());
            d.rocks.write(d.writeOptions, batch.writeBatch());
        } catch (RocksDBException e) {
            throw new StorageException("write at " + position + " failed: " + e.getMessage(), e);
        } finally {
            swap.readLock().unlock();
            batch.close();
        }
        batch.registryChanges().forEach((topic, groups) -> {
            if (groups.isEmpty()) {
                registry.remove(topic);
            } else {
                registry.put(topic, Set.copyOf(groups));
            }
        });
        applied = position;
    }

    public Optional<StoredMessage> message(EventKey key) {
        byte[] value = get(d -> d.events, key.toBytes());
        return value == null ? Optional.empty() : Optional.of(parse(value));
    }

    public boolean hasReceipt(EventKey key, String group) {
        return get(d -> d.receipts, StoreKeys.receiptKey(key, group)) != null;
    }

    /** The durable groups of a topic (empty when it has none). */
    public Set<String> durableGroups(String topic) {
        return registry.getOrDefault(topic, Set.of());
    }

    public Map<String, Set<String>> topicRegistry() {
        return Map.copyOf(registry);
    }

    /** Receives scanned messages; returns false to stop the scan. */
    @FunctionalInterface
    public interface ScanVisitor {
        boolean visit(EventKey key, StoredMessage message);
    }

    /**
     * Visits, in key order, the messages of one topic hash due at {@code nowMs}. Reads a consistent
     * snapshot and never touches keys due later (the iterator's upper bound stops it).
     */
    public void scanDue(long topicHash, long nowMs, ScanVisitor visitor) {
        scan(d -> d.events, EventKey.scanStart(topicHash), EventKey.scanEnd(topicHash, nowMs),
                (k, v) -> visitor.visit(EventKey.fromBytes(k), parse(v)));
    }

    /**
     * Visits, in key order from {@code from}, the messages of one topic hash due at {@code nowMs},
     * each with the groups that hold a receipt for it, all read from one snapshot in one pass (a
     * second iterator walks the receipts in step, instead of a point read per message and group).
     * Returns the due time of the first key after {@code nowMs} (the next one to fall due), or
     * {@link Long#MAX_VALUE} when none follows or the visitor stopped the scan.
     */
    public long scanDueFrom(long topicHash, EventKey from, long nowMs, DueRange.Visitor visitor) {
        return read((d, snapshot) -> DueRange.scan(d, snapshot, topicHash, from, nowMs, visitor));
    }

    /** Runs {@code body} over one consistent snapshot of the open database (same package). */
    <T> T read(java.util.function.BiFunction<Db, Snapshot, T> body) {
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

    /** Parses a stored message value (a scan's raw bytes). */
    public static StoredMessage parseMessage(byte[] value) {
        return parse(value);
    }

    /** Visits the keys of messages whose expiry time is at or before {@code nowMs}. */
    public void scanExpired(long nowMs, java.util.function.Predicate<EventKey> visitor) {
        byte[] end = ByteBuffer.allocate(8).putLong(nowMs + 1).array();
        scan(d -> d.expiry, new byte[0], end, (k, v) -> visitor.test(
                EventKey.fromBytes(java.util.Arrays.copyOfRange(k, 8, 8 + EventKey.LENGTH))));
    }

    /** Visits every stored message in key order (admin and tests; O(store)). */
    public void scanAll(ScanVisitor visitor) {
        scan(d -> d.events, new byte[0], null, (k, v) -> visitor.visit(EventKey.fromBytes(k), parse(v)));
    }

    interface RawVisitor {
        boolean visit(byte[] key, byte[] value);
    }

    void scan(java.util.function.Function<Db, ColumnFamilyHandle> family, byte[] start, byte[] endExclusive,
              RawVisitor visitor) {
        swap.readLock().lock();
        Db d = db;
        ColumnFamilyHandle cf = family.apply(d);
        Snapshot snapshot = d.rocks.getSnapshot();
        try (ReadOptions ro = new ReadOptions().setSnapshot(snapshot);
             Slice upper = endExclusive == null ? null : new Slice(endExclusive)) {
            if (upper != null) {
                ro.setIterateUpperBound(upper);
            }
            try (RocksIterator it = d.rocks.newIterator(cf, ro)) {
                for (it.seek(start); it.isValid(); it.next()) {
                    if (!visitor.visit(it.key(), it.value())) {
                        break;
                    }
                }
                it.status();
            }
        } catch (RocksDBException e) {
            throw new StorageException("scan failed: " + e.getMessage(), e);
        } finally {
            d.rocks.releaseSnapshot(snapshot);
            swap.readLock().unlock();
        }
    }

    /** Reads one key of a column family chosen by the caller (same package). */
    byte[] get(java.util.function.Function<Db, ColumnFamilyHandle> family, byte[] key) {
        swap.readLock().lock();
        try {
            return db.rocks.get(family.apply(db), key);
        } catch (RocksDBException e) {
            throw new StorageException("read failed: " + e.getMessage(), e);
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
        swap.readLock().lock();
        Db d = db;
        Snapshot snapshot = d.rocks.getSnapshot();
        try (ReadOptions ro = new ReadOptions().setSnapshot(snapshot)) {
            byte[] appliedValue = d.rocks.get(d.meta, ro, APPLIED_KEY);
            try (RocksIterator it = d.rocks.newIterator(d.rooms, ro)) {
                for (it.seekToFirst(); it.isValid(); it.next()) {
                    if (!visitor.visit(it.key(), it.value())) {
                        break;
                    }
                }
                it.status();
            }
            if (appliedValue == null) {
                return TermIndex.INITIAL;
            }
            ByteBuffer b = ByteBuffer.wrap(appliedValue);
            return new TermIndex(b.getLong(), b.getLong());
        } catch (RocksDBException e) {
            throw new StorageException("rooms scan failed: " + e.getMessage(), e);
        } finally {
            d.rocks.releaseSnapshot(snapshot);
            swap.readLock().unlock();
        }
    }

    /** The replicated state condensed: SHA-256 over every column family, and the position it covers. */
    public record Digest(TermIndex applied, String sha256) {
    }

    /**
     * Digests every replicated column family from one RocksDB snapshot, so the digest and the
     * applied position it reports belong together. O(store): an operator's and a test's query.
     */
    public Digest digest() {
        swap.readLock().lock();
        Db d = db;
        Snapshot snapshot = d.rocks.getSnapshot();
        try (ReadOptions ro = new ReadOptions().setSnapshot(snapshot)) {
            java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
            TermIndex at = TermIndex.INITIAL;
            for (int i = 1; i < d.handles.size(); i++) {
                sha.update((byte) i);
                try (RocksIterator it = d.rocks.newIterator(d.handles.get(i), ro)) {
                    for (it.seekToFirst(); it.isValid(); it.next()) {
                        byte[] k = it.key();
                        byte[] v = it.value();
                        if (d.handles.get(i) == d.meta && java.util.Arrays.equals(k, APPLIED_KEY)) {
                            ByteBuffer b = ByteBuffer.wrap(v);
                            at = new TermIndex(b.getLong(), b.getLong());
                            continue; // the position is reported beside the digest, not inside it
                        }
                        sha.update(ByteBuffer.allocate(8).putInt(k.length).putInt(v.length).array());
                        sha.update(k);
                        sha.update(v);
                    }
                    it.status();
                }
            }
            return new Digest(at, java.util.HexFormat.of().formatHex(sha.digest()));
        } catch (RocksDBException | java.security.NoSuchAlgorithmException e) {
            throw new StorageException("digest failed: " + e.getMessage(), e);
        } finally {
            d.rocks.releaseSnapshot(snapshot);
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
            deleteRecursively(old);
            Files.move(dir, old);
            Files.move(checkpoint, dir);
            db = new Db(dir);
            applied = readApplied();
            registry.clear();
            loadRegistry();
            deleteRecursively(old);
            LOG.info("store {} replaced by a checkpoint: applied {} -> {}", dir, before, applied);
        } catch (RocksDBException | java.io.IOException e) {
            throw new StorageException("cannot install checkpoint " + checkpoint + ": " + e.getMessage(), e);
        } finally {
            swap.writeLock().unlock();
        }
    }

    static void deleteRecursively(Path p) throws java.io.IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var files = Files.walk(p)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        }
    }

    /** The key a producer id was stored under, if it was stored since the dedup window began. */
    public Optional<EventKey> keyOfProducerId(String producerId) {
        byte[] v = get(d -> d.dedup, StoreKeys.dedupKey(producerId));
        return v == null ? Optional.empty() : Optional.of(EventKey.fromBytes(java.util.Arrays.copyOf(v, EventKey.LENGTH)));
    }

    /** The room key a room send's producer id was stored under, within the dedup window. */
    public Optional<byte[]> roomKeyOfProducerId(String producerId) {
        byte[] v = get(d -> d.dedup, StoreKeys.roomDedupKey(producerId));
        return v == null ? Optional.empty() : Optional.of(java.util.Arrays.copyOf(v, v.length - 8));
    }

    interface DedupVisitor {
        boolean visit(long stampMs, String producerId);
    }

    void scanDedupTimes(long beforeMs, DedupVisitor visitor) {
        byte[] start = {'t'};
        byte[] end = ByteBuffer.allocate(9).put((byte) 't').putLong(beforeMs).array();
        scan(d -> d.dedup, start, end, (k, v) -> visitor.visit(ByteBuffer.wrap(k, 1, 8).getLong(),
                new String(k, 9, k.length - 9, StandardCharsets.UTF_8)));
    }

    /** The client address a member registered through the log, if it did. */
    public Optional<String> peerAddress(String id) {
        byte[] v = get(d -> d.meta, StoreKeys.peerKey(id));
        return v == null ? Optional.empty() : Optional.of(new String(v, StandardCharsets.UTF_8));
    }

    /** Visits every stored message of one topic (due or not), in key order. */
    public void scanTopic(String topic, ScanVisitor visitor) {
        long hash = EventKey.topicHash(topic);
        byte[] end = hash == -1L ? null : EventKey.scanStart(hash + 1);
        scan(d -> d.events, EventKey.scanStart(hash), end, (k, v) -> {
            var m = parse(v);
            return !m.getTopic().equals(topic) || visitor.visit(EventKey.fromBytes(k), m);
        });
    }

    static StoredMessage parse(byte[] value) {
        try {
            return StoredMessage.parseFrom(value);
        } catch (InvalidProtocolBufferException e) {
            throw new StorageException("corrupt stored message: " + e.getMessage(), e);
        }
    }

    private TermIndex readApplied() {
        byte[] v = get(d -> d.meta, APPLIED_KEY);
        if (v == null) {
            return TermIndex.INITIAL;
        }
        ByteBuffer b = ByteBuffer.wrap(v);
        return new TermIndex(b.getLong(), b.getLong());
    }

    private void loadRegistry() {
        byte[] prefix = TOPIC_PREFIX.getBytes(StandardCharsets.UTF_8);
        byte[] end = prefix.clone();
        end[end.length - 1]++;
        scan(d -> d.meta, prefix, end, (k, v) -> {
            String topic = new String(k, prefix.length, k.length - prefix.length, StandardCharsets.UTF_8);
            try {
                registry.put(topic, Set.copyOf(TopicGroups.parseFrom(v).getGroupsList()));
            } catch (InvalidProtocolBufferException e) {
                throw new StorageException("corrupt topic registry entry for " + topic, e);
            }
            return true;
        });
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
