package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.ApplyResult;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.DeferCmd;
import io.hourglass.core.proto.Deferral;
import io.hourglass.core.proto.DeleteBatchCmd;
import io.hourglass.core.proto.DeleteGroupCmd;
import io.hourglass.core.proto.Deletion;
import io.hourglass.core.proto.DeliveryCount;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.proto.RegisterGroupCmd;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDBException;
import org.rocksdb.TableProperties;

/**
 * What a durable group records of a message — its receipt, a deferral, a delivery count — goes
 * with the message, and with the group when the group is deleted; and it goes point by point:
 * a range tombstone per deleted message made every later iterator over these column families (the
 * dispatcher's receipts scan, once per topic per pass) and every flush and compaction re-fragment
 * all of them, 13 % of a leader's CPU at 1 000 msg/s.
 */
@Timeout(60)
class GroupStateDeletionTest {
    @TempDir
    Path dir;
    private EventStore store;
    private StateApplier applier;
    private long index;

    @BeforeEach
    void open() {
        store = EventStore.open(dir.resolve("db"));
        applier = new StateApplier(store);
        register("t", "a");
        register("t", "b");
    }

    @AfterEach
    void close() {
        store.close();
    }

    @Test
    void aDeletedMessageTakesEveryGroupsReceiptDeferralAndCountAndLeavesNoRangeTombstone() {
        List<EventKey> keys = publishWithBothGroupsState(200);
        apply(Command.newBuilder().setDeleteBatch(deletions(keys, "a")), 30);
        for (EventKey k : keys) {
            assertTrue(store.queue().hasReceipt(k, "a"));
            assertEquals(3, store.queue().deliveryCount(k, "b"));
        }

        apply(Command.newBuilder().setDeleteBatch(deletions(keys, "b")), 40);

        for (EventKey k : keys) {
            assertTrue(store.queue().message(k).isEmpty());
            assertFalse(store.queue().hasReceipt(k, "a"));
            assertFalse(store.queue().hasReceipt(k, "b"));
            assertEquals(0, store.queue().deliveryCount(k, "a"));
            assertEquals(0, store.queue().deliveryCount(k, "b"));
        }
        assertEquals(0, deferrals(), "the deferrals went with their messages");
        store.flush();
        assertEquals(0, rangeDeletionsOnDisk());
    }

    @Test
    void aDeletedGroupTakesItsReceiptsDeferralsAndCountsAlong() {
        List<EventKey> keys = publish("t", 3);
        for (EventKey k : keys) {
            recordGroupState(k, "a");
        }
        apply(Command.newBuilder().setDeleteBatch(deletions(keys.subList(0, 1), "a")), 30);
        assertTrue(store.queue().hasReceipt(keys.get(0), "a"));

        apply(Command.newBuilder().setDeleteGroup(DeleteGroupCmd.newBuilder().setTopic("t").setGroup("a")), 40);

        for (EventKey k : keys) {
            assertTrue(store.queue().message(k).isPresent(), "group b has not acknowledged it");
            assertFalse(store.queue().hasReceipt(k, "a"));
            assertEquals(0, store.queue().deliveryCount(k, "a"));
        }
        assertEquals(0, deferrals());
    }

    @Test
    void groupStateOnDiskStillGoesWithItsMessage() {
        List<EventKey> keys = publishWithBothGroupsState(50);
        store.flush(); // the state is in table files now, behind their filters, not in a memtable

        apply(Command.newBuilder().setDeleteBatch(deletions(keys, "a")), 30);
        store.flush();
        apply(Command.newBuilder().setDeleteBatch(deletions(keys, "b")), 40);

        for (EventKey k : keys) {
            assertTrue(store.queue().message(k).isEmpty());
            assertFalse(store.queue().hasReceipt(k, "a"));
            assertEquals(0, store.queue().deliveryCount(k, "b"));
        }
        assertEquals(0, deferrals());
        assertEquals(0, entries(d -> d.receipts));
        assertEquals(0, entries(d -> d.deliveries));
    }

    @Test
    void aReceiptWrittenEarlierInTheSameEntryGoesWithTheMessage() {
        List<EventKey> keys = publish("t", 20);
        // Group a's deletion records its receipt (b has none yet); b's, later in the same entry,
        // removes the message, and with it that receipt, which is only in the entry's batch.
        DeleteBatchCmd.Builder both = deletions(keys, "a");
        keys.forEach(k -> both.addDeletions(Deletion.newBuilder().setEventKey(ByteString.copyFrom(k.toBytes()))
                .setGroup("b")));
        assertEquals(keys.size(), apply(Command.newBuilder().setDeleteBatch(both), 30).deleted().size());

        assertEquals(0, entries(d -> d.receipts), "no receipt outlives its message");
    }

    @Test
    void aMessageRemovedWithNoGroupStateWritesNoTombstonesForIt() {
        register("solo", "only");
        List<EventKey> keys = publish("solo", 100);
        apply(Command.newBuilder().setDeleteBatch(deletions(keys, "only")), 30);

        keys.forEach(k -> assertTrue(store.queue().message(k).isEmpty()));
        assertEquals(0, memtableDeletes(d -> d.receipts));
        assertEquals(0, memtableDeletes(d -> d.deferred));
        assertEquals(0, memtableDeletes(d -> d.deliveries));
        assertEquals(keys.size(), memtableDeletes(d -> d.events), "the messages themselves are deleted");
    }

    private void register(String topic, String group) {
        apply(Command.newBuilder().setRegisterGroup(RegisterGroupCmd.newBuilder().setTopic(topic).setGroup(group)), 1);
    }

    private List<EventKey> publish(String topic, int n) {
        PutCmd.Builder put = PutCmd.newBuilder();
        for (int i = 0; i < n; i++) {
            put.addMessages(NewMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8("m" + i)));
        }
        return apply(Command.newBuilder().setPut(put), 10).published();
    }

    /** {@code n} messages on topic t, each with a deferral and a delivery count of groups a and b. */
    private List<EventKey> publishWithBothGroupsState(int n) {
        List<EventKey> keys = publish("t", n);
        for (EventKey k : keys) {
            recordGroupState(k, "a");
            recordGroupState(k, "b");
        }
        return keys;
    }

    /** A deferral (a delayed NACK) and a delivery count of {@code group} for {@code key}. */
    private void recordGroupState(EventKey key, String group) {
        ByteString k = ByteString.copyFrom(key.toBytes());
        apply(Command.newBuilder().setDefer(DeferCmd.newBuilder().addDeferrals(
                Deferral.newBuilder().setEventKey(k).setGroup(group).setUntilMs(1_000_000))), 20);
        apply(Command.newBuilder().setDeleteBatch(DeleteBatchCmd.newBuilder().addCounts(
                DeliveryCount.newBuilder().setEventKey(k).setGroup(group).setDeliveries(3))), 20);
    }

    private static DeleteBatchCmd.Builder deletions(List<EventKey> keys, String group) {
        DeleteBatchCmd.Builder b = DeleteBatchCmd.newBuilder();
        keys.forEach(k -> b.addDeletions(Deletion.newBuilder().setEventKey(ByteString.copyFrom(k.toBytes())).setGroup(group)));
        return b;
    }

    private ApplyResult apply(Command.Builder c, long stamp) {
        return applier.apply(c.setStampedAtMs(stamp).build(), new TermIndex(1, ++index));
    }

    private long deferrals() {
        return entries(d -> d.deferred);
    }

    private long entries(java.util.function.Function<Db, ColumnFamilyHandle> family) {
        List<byte[]> all = new ArrayList<>();
        store.scan(family, new byte[0], null, (k, v) -> all.add(k));
        return all.size();
    }

    private long memtableDeletes(java.util.function.Function<Db, ColumnFamilyHandle> family) {
        return store.read((d, snapshot) -> {
            try {
                return d.rocks.getLongProperty(family.apply(d), "rocksdb.num-deletes-active-mem-table");
            } catch (RocksDBException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private long rangeDeletionsOnDisk() {
        return store.read((d, snapshot) -> {
            long n = 0;
            try {
                for (ColumnFamilyHandle h : d.handles) {
                    for (TableProperties p : d.rocks.getPropertiesOfAllTables(h).values()) {
                        n += p.getNumRangeDeletions();
                    }
                }
            } catch (RocksDBException e) {
                throw new IllegalStateException(e);
            }
            return n;
        });
    }
}
