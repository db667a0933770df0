package io.hourglass.core.storage;

import io.hourglass.core.proto.StoredMessage;
import io.hourglass.core.proto.TopicGroups;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;

/**
 * The writes of one applied log entry, committed atomically with the applied position by
 * {@link EventStore#commit}. Owned by the apply thread; single use. Domain views of this package
 * ({@link ProducerIds}) write through {@link #put} and {@link #delete}.
 */
public final class StoreBatch implements AutoCloseable {
    private final EventStore store;
    private final Db db;
    private final WriteBatch batch = new WriteBatch();
    private final Map<String, Set<String>> registryChanges = new HashMap<>();
    /**
     * The keys this batch put in a per-group column family (receipts, deferred, deliveries): they
     * are not in the store yet, so {@link #forgetGroup} deletes them without asking it.
     */
    private final Set<ByteBuffer> groupKeysPut = new HashSet<>();
    /** Messages added (removed: negative) per minute of due time, for {@link DueCounts}. */
    private final Map<DueCounts.Cell, Long> dueChanges = new HashMap<>();
    /** The messages this batch removed: a second removal of one changes no count. */
    private final Set<EventKey> removed = new HashSet<>();
    /** The earliest expiry key this batch puts ({@code Long.MAX_VALUE}: none). */
    private long earliestExpiry = Long.MAX_VALUE;

    StoreBatch(EventStore store, Db db) {
        this.store = store;
        this.db = db;
    }

    long earliestExpiry() {
        return earliestExpiry;
    }

    Db db() {
        return db;
    }

    void put(ColumnFamilyHandle family, byte[] key, byte[] value) {
        try {
            batch.put(family, key, value);
        } catch (RocksDBException e) {
            throw new StorageException("batch put failed", e);
        }
    }

    void delete(ColumnFamilyHandle family, byte[] key) {
        try {
            batch.delete(family, key);
        } catch (RocksDBException e) {
            throw new StorageException("batch delete failed", e);
        }
    }

    /** Stores the token of principal {@code name} (security column family). */
    public void putToken(String name, io.hourglass.core.proto.StoredToken token) {
        put(db.security, SecurityRecords.tokenKey(name), token.toByteArray());
    }

    public void deleteToken(String name) {
        delete(db.security, SecurityRecords.tokenKey(name));
    }

    public void putGrant(io.hourglass.core.proto.Grant grant) {
        put(db.security, SecurityRecords.grantKey(grant), new byte[0]);
    }

    public void deleteGrant(io.hourglass.core.proto.Grant grant) {
        delete(db.security, SecurityRecords.grantKey(grant));
    }

    public void putMessage(EventKey key, StoredMessage message) {
        put(db.events, key.toBytes(), message.toByteArray());
        dueChanges.merge(new DueCounts.Cell(key.topicHash(), DueCounts.minute(key.dueAtMs())), 1L, Long::sum);
        if (message.getExpiresAtMs() > 0) {
            put(db.expiry, StoreKeys.expiryKey(message.getExpiresAtMs(), key), new byte[0]);
            earliestExpiry = Math.min(earliestExpiry, message.getExpiresAtMs());
        }
        if (!message.getKey().isEmpty()) {
            put(db.keys, StoreKeys.scheduleKey(message.getTopic(), message.getKey()), key.toBytes());
        }
        if (message.getEveryMs() > 0) {
            put(db.recurring, StoreKeys.expiryKey(message.getDueAtMs(), key), new byte[0]);
        }
    }

    /** A recurring message fired: it leaves the index of those still to fire (it stays stored). */
    public void fired(EventKey key, StoredMessage message) {
        delete(db.recurring, StoreKeys.expiryKey(message.getDueAtMs(), key));
    }

    /** Removes a message with its expiry entry, its schedule key and all of its receipts. */
    public void deleteMessage(EventKey key, StoredMessage message) {
        byte[] k = key.toBytes();
        delete(db.events, k);
        if (removed.add(key)) {
            dueChanges.merge(new DueCounts.Cell(key.topicHash(), DueCounts.minute(key.dueAtMs())), -1L, Long::sum);
        }
        if (message.getExpiresAtMs() > 0) {
            delete(db.expiry, StoreKeys.expiryKey(message.getExpiresAtMs(), key));
        }
        if (!message.getKey().isEmpty()) {
            byte[] sk = StoreKeys.scheduleKey(message.getTopic(), message.getKey());
            // A fired recurring message shares its key with the next firing, which the key names now.
            if (message.getEveryMs() == 0 || java.util.Arrays.equals(store.get(d -> d.keys, sk), k)) {
                delete(db.keys, sk);
            }
        }
        if (message.getEveryMs() > 0) {
            delete(db.recurring, StoreKeys.expiryKey(message.getDueAtMs(), key));
        }
        // Point deletes per durable group, not a range delete per message: receipts, deferrals and
        // delivery counts are only ever written for a durable group of the message's topic (a group's
        // deletion removes its own), and every range tombstone made each later iterator over these
        // column families, the dispatcher's receipts scan among them, and every flush and compaction
        // re-fragment all of them: 13 % of a leader's CPU at 1 000 msg/s.
        for (String group : durableGroups(message.getTopic())) {
            forgetGroup(key, group);
        }
    }

    /** Removes what group {@code group} recorded of message {@code key}: receipt, deferral, delivery count. */
    public void forgetGroup(EventKey key, String group) {
        byte[] rk = StoreKeys.receiptKey(key, group);
        boolean putHere = groupKeysPut.contains(ByteBuffer.wrap(rk));
        deleteIfPresent(db.receipts, rk, putHere);
        deleteIfPresent(db.deferred, rk, putHere);
        deleteIfPresent(db.deliveries, rk, putHere);
    }

    /**
     * Deletes a per-group key unless the store's filters say it is not there. Nearly every message
     * is removed without any receipt, deferral or delivery count ever written for it, and a
     * tombstone for each of the three was a memtable insert, WAL bytes and compaction work per
     * message and group, and one more entry for the dispatcher's receipts scan to skip. The
     * logical content is the same either way (a tombstone over nothing hides nothing), so replicas
     * that decide differently (their filters and caches differ) still hold the same data.
     */
    private void deleteIfPresent(ColumnFamilyHandle family, byte[] key, boolean putHere) {
        if (putHere || db.rocks.keyMayExist(family, key, null)) {
            delete(family, key);
        }
    }

    private void putGroupKey(ColumnFamilyHandle family, byte[] key, byte[] value) {
        put(family, key, value);
        groupKeysPut.add(ByteBuffer.wrap(key));
    }

    /** Group {@code group} is not offered the message before {@code untilMs} (a delayed NACK). */
    public void putDeferral(EventKey key, String group, long untilMs) {
        putGroupKey(db.deferred, StoreKeys.receiptKey(key, group), Db.encodeLong(untilMs));
    }

    /** How many times the message went to {@code group} without an acknowledgement (see DeliveryCount). */
    public void putDeliveryCount(EventKey key, String group, int deliveries) {
        putGroupKey(db.deliveries, StoreKeys.receiptKey(key, group), ByteBuffer.allocate(4).putInt(deliveries).array());
    }

    /** Stores a durable group's policy; null removes it. */
    public void putGroupPolicy(String topic, String group, io.hourglass.core.proto.GroupPolicy policy) {
        if (policy == null) {
            delete(db.meta, StoreKeys.groupPolicyKey(topic, group));
        } else {
            put(db.meta, StoreKeys.groupPolicyKey(topic, group), policy.toByteArray());
        }
    }

    public void putReceipt(EventKey key, String group) {
        putGroupKey(db.receipts, StoreKeys.receiptKey(key, group), new byte[0]);
    }

    /** Records the cluster's shard count (the metadata group's {@code ClusterLayoutCmd}). */
    public void putClusterShards(int shards) {
        put(db.meta, StoreKeys.CLUSTER_SHARDS_KEY, Integer.toString(shards).getBytes(StandardCharsets.UTF_8));
    }

    public void putPeerAddress(String id, String grpcAddress) {
        put(db.meta, StoreKeys.peerKey(id), grpcAddress.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Sets the durable groups of a topic (empty removes the topic from the registry). The names are
     * stored sorted: a set's iteration order is no contract (the registry's immutable sets even order
     * their elements by a seed each JVM draws at start), and every replica must write the same bytes.
     */
    public void putTopicGroups(String topic, Set<String> groups) {
        if (groups.isEmpty()) {
            delete(db.meta, StoreKeys.topicKey(topic));
        } else {
            put(db.meta, StoreKeys.topicKey(topic),
                    TopicGroups.newBuilder().addAllGroups(new java.util.TreeSet<>(groups)).build().toByteArray());
        }
        registryChanges.put(topic, new HashSet<>(groups));
    }

    /** Writes one entry of the {@code rooms} column family. */
    public void putRoomEntry(byte[] key, byte[] value) {
        put(db.rooms, key, value);
    }

    /** Removes one entry of the {@code rooms} column family. */
    public void deleteRoomEntry(byte[] key) {
        delete(db.rooms, key);
    }

    /** Durable groups of a topic as this batch will leave them. */
    public Set<String> durableGroups(String topic) {
        Set<String> changed = registryChanges.get(topic);
        return changed != null ? changed : store.durableGroups(topic);
    }

    WriteBatch writeBatch() {
        return batch;
    }

    Map<DueCounts.Cell, Long> dueChanges() {
        return dueChanges;
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
