package io.hourglass.core.storage;

import io.hourglass.core.proto.StoredMessage;
import io.hourglass.core.proto.TopicGroups;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;

/**
 * The writes of one applied log entry, committed atomically with the applied position by
 * {@link EventStore#commit}. Owned by the apply thread; single use.
 */
public final class StoreBatch implements AutoCloseable {
    private final EventStore store;
    private final EventStore.Db db;
    private final WriteBatch batch = new WriteBatch();
    private final Map<String, Set<String>> registryChanges = new HashMap<>();

    StoreBatch(EventStore store, EventStore.Db db) {
        this.store = store;
        this.db = db;
    }

    EventStore.Db db() {
        return db;
    }

    public void putMessage(EventKey key, StoredMessage message) {
        try {
            batch.put(db.events, key.toBytes(), message.toByteArray());
            if (message.getExpiresAtMs() > 0) {
                batch.put(db.expiry, StoreKeys.expiryKey(message.getExpiresAtMs(), key), new byte[0]);
            }
        } catch (RocksDBException e) {
            throw new StorageException("batch put failed", e);
        }
    }

    /** Removes a message with its expiry entry and all of its receipts. */
    public void deleteMessage(EventKey key, StoredMessage message) {
        try {
            byte[] k = key.toBytes();
            batch.delete(db.events, k);
            if (message.getExpiresAtMs() > 0) {
                batch.delete(db.expiry, StoreKeys.expiryKey(message.getExpiresAtMs(), key));
            }
            batch.deleteRange(db.receipts, k, successor(k));
        } catch (RocksDBException e) {
            throw new StorageException("batch delete failed", e);
        }
    }

    public void putReceipt(EventKey key, String group) {
        try {
            batch.put(db.receipts, StoreKeys.receiptKey(key, group), new byte[0]);
        } catch (RocksDBException e) {
            throw new StorageException("batch put failed", e);
        }
    }

    /** Remembers that {@code producerId} was stored as {@code key} at {@code stampMs}. */
    public void putProducerId(String producerId, EventKey key, long stampMs) {
        try {
            batch.put(db.dedup, StoreKeys.dedupKey(producerId),
                    java.nio.ByteBuffer.allocate(EventKey.LENGTH + 8).put(key.toBytes()).putLong(stampMs).array());
            batch.put(db.dedup, StoreKeys.dedupTimeKey(stampMs, producerId), new byte[0]);
        } catch (RocksDBException e) {
            throw new StorageException("batch put failed", e);
        }
    }

    /** Remembers that a room send's {@code producerId} was stored under {@code roomKey}. */
    public void putRoomProducerId(String producerId, byte[] roomKey, long stampMs) {
        try {
            batch.put(db.dedup, StoreKeys.roomDedupKey(producerId),
                    java.nio.ByteBuffer.allocate(roomKey.length + 8).put(roomKey).putLong(stampMs).array());
            batch.put(db.dedup, StoreKeys.dedupTimeKey(stampMs, producerId), new byte[0]);
        } catch (RocksDBException e) {
            throw new StorageException("batch put failed", e);
        }
    }

    /** Forgets producer ids remembered before {@code beforeMs}, at most {@code limit} of them. */
    public int forgetProducerIdsBefore(long beforeMs, int limit) {
        int[] n = {0};
        store.scanDedupTimes(beforeMs, (stamp, producerId) -> {
            try {
                batch.delete(db.dedup, StoreKeys.dedupKey(producerId));
                batch.delete(db.dedup, StoreKeys.roomDedupKey(producerId));
                batch.delete(db.dedup, StoreKeys.dedupTimeKey(stamp, producerId));
            } catch (RocksDBException e) {
                throw new StorageException("batch delete failed", e);
            }
            return ++n[0] < limit;
        });
        return n[0];
    }

    public void putPeerAddress(String id, String grpcAddress) {
        try {
            batch.put(db.meta, StoreKeys.peerKey(id), grpcAddress.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (RocksDBException e) {
            throw new StorageException("batch put failed", e);
        }
    }

    public void deleteReceipt(EventKey key, String group) {
        try {
            batch.delete(db.receipts, StoreKeys.receiptKey(key, group));
        } catch (RocksDBException e) {
            throw new StorageException("batch delete failed", e);
        }
    }

    /** Sets the durable groups of a topic (empty removes the topic from the registry). */
    public void putTopicGroups(String topic, Set<String> groups) {
        try {
            if (groups.isEmpty()) {
                batch.delete(db.meta, StoreKeys.topicKey(topic));
            } else {
                batch.put(db.meta, StoreKeys.topicKey(topic),
                        TopicGroups.newBuilder().addAllGroups(groups).build().toByteArray());
            }
        } catch (RocksDBException e) {
            throw new StorageException("batch put failed", e);
        }
        registryChanges.put(topic, new HashSet<>(groups));
    }

    /** Writes one entry of the {@code rooms} column family. */
    public void putRoomEntry(byte[] key, byte[] value) {
        try {
            batch.put(db.rooms, key, value);
        } catch (RocksDBException e) {
            throw new StorageException("batch put failed", e);
        }
    }

    /** Removes one entry of the {@code rooms} column family. */
    public void deleteRoomEntry(byte[] key) {
        try {
            batch.delete(db.rooms, key);
        } catch (RocksDBException e) {
            throw new StorageException("batch delete failed", e);
        }
    }

    /** Durable groups of a topic as this batch will leave them. */
    public Set<String> durableGroups(String topic) {
        Set<String> changed = registryChanges.get(topic);
        return changed != null ? changed : store.durableGroups(topic);
    }

    WriteBatch writeBatch() {
        return batch;
    }

    Map<String, Set<String>> registryChanges() {
        return registryChanges;
    }

    /** The smallest byte string greater than every string that starts with {@code key}. */
    static byte[] successor(byte[] key) {
        byte[] next = key.clone();
        for (int i = next.length - 1; i >= 0; i--) {
            if (++next[i] != 0) {
                return next;
            }
        }
        throw new IllegalArgumentException("no successor of an all-0xFF key");
    }

    @Override
    public void close() {
        batch.close();
    }
}
