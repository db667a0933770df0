package io.hourglass.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.DeleteBatchCmd;
import io.hourglass.core.proto.Deletion;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.proto.RegisterGroupCmd;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.ProducerIds;
import io.hourglass.core.storage.TermIndex;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class StateApplierTest {
    @TempDir
    Path dir;
    private EventStore store;
    private StateApplier applier;
    private long index;

    @BeforeEach
    void open() {
        store = EventStore.open(dir.resolve("db"));
        applier = new StateApplier(store);
    }

    @AfterEach
    void close() {
        store.close();
    }

    private ApplyResult apply(Command.Builder c, long stamp) {
        return applier.apply(c.setStampedAtMs(stamp).build(), new TermIndex(1, ++index));
    }

    private static Command.Builder put(String topic, long delay, long ttl, String... payloads) {
        PutCmd.Builder p = PutCmd.newBuilder();
        for (String s : payloads) {
            p.addMessages(NewMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8(s))
                    .setDelayMs(delay).setTtlMs(ttl));
        }
        return Command.newBuilder().setPut(p);
    }

    private static Command.Builder delete(EventKey key, String group) {
        return Command.newBuilder().setDeleteBatch(DeleteBatchCmd.newBuilder().addDeletions(
                Deletion.newBuilder().setEventKey(ByteString.copyFrom(key.toBytes())).setGroup(group)));
    }

    private static Command.Builder register(String topic, String group) {
        return Command.newBuilder().setRegisterGroup(RegisterGroupCmd.newBuilder().setTopic(topic).setGroup(group));
    }

    @Test
    void putComputesDueAndExpiryFromTheLeaderStamp() {
        ApplyResult r = apply(put("t", 5_000, 2_000, "a", "b"), 1_000_000);
        assertEquals(2, r.published().size());
        EventKey k = r.published().get(0);
        assertEquals(1_005_000, k.dueAtMs());
        var m = store.queue().message(k).orElseThrow();
        assertEquals(1_000_000, m.getEnqueuedAtMs());
        assertEquals(1_007_000, m.getExpiresAtMs(), "TTL counts from the due time");
        assertFalse(r.duePublished());
        assertTrue(apply(put("t", 0, 0, "now"), 1_000_001).duePublished());
        assertEquals(new TermIndex(1, index), store.appliedIndex());
    }

    @Test
    void sameEntryGivesSameKeysOnEveryReplica(@TempDir Path other) {
        ApplyResult here = apply(put("t", 10, 0, "x", "y"), 500);
        try (EventStore replica = EventStore.open(other.resolve("db"))) {
            ApplyResult there = new StateApplier(replica).apply(put("t", 10, 0, "x", "y").setStampedAtMs(500).build(),
                    new TermIndex(1, index));
            assertEquals(here.published(), there.published());
        }
    }

    /**
     * An entry as a follower reads it, parsed from the log's bytes, whose messages switch topics and
     * carry producer ids and keys: each is stored under its own topic (the topic hash is reused only
     * while the topic stays the same) with its names and ids as published, and a retry of an id is
     * answered with the message stored the first time.
     */
    @Test
    void entryParsedFromBytesKeepsEachMessagesTopicIdAndKey() throws Exception {
        PutCmd.Builder p = PutCmd.newBuilder();
        String[][] messages = {{"a", "p-1", ""}, {"a", "p-2", "k"}, {"b", "p-3", ""}, {"a", "", ""}, {"b", "p-4", "k"}};
        for (String[] m : messages) {
            p.addMessages(NewMessage.newBuilder().setTopic(m[0]).setProducerId(m[1]).setKey(m[2])
                    .setPayload(ByteString.copyFromUtf8(m[0] + m[1])));
        }
        byte[] entry = Command.newBuilder().setPut(p).setStampedAtMs(1_000).build().toByteArray();
        ApplyResult r = applier.apply(Command.parseFrom(entry), new TermIndex(1, ++index));
        assertEquals(messages.length, r.published().size());
        for (int i = 0; i < messages.length; i++) {
            EventKey k = r.published().get(i);
            assertEquals(EventKey.topicHash(messages[i][0]), k.topicHash(), "message " + i + "'s topic hash");
            var stored = store.queue().message(k).orElseThrow();
            assertEquals(messages[i][0], stored.getTopic());
            assertEquals(messages[i][1], stored.getProducerId());
            assertEquals(messages[i][2], stored.getKey());
        }
        assertEquals(r.published().get(2), store.keyOfProducerId("p-3").orElseThrow());
        PutCmd retry = PutCmd.newBuilder().addMessages(NewMessage.newBuilder().setTopic("b").setProducerId("p-3")
                .setPayload(ByteString.copyFromUtf8("again"))).build();
        byte[] again = Command.newBuilder().setPut(retry).setStampedAtMs(1_001).build().toByteArray();
        assertEquals(List.of(r.published().get(2)),
                applier.apply(Command.parseFrom(again), new TermIndex(1, ++index)).published());
    }

    @Test
    void messageIsRemovedOnlyWhenEveryDurableGroupHasAcknowledged() {
        apply(register("t", "billing"), 1);
        apply(register("t", "audit"), 2);
        EventKey k = apply(put("t", 0, 60_000, "m"), 3).published().get(0);

        ApplyResult first = apply(delete(k, "billing"), 4);
        assertEquals(List.of(new ApplyResult.Receipt(k, "billing")), first.receipts());
        assertTrue(first.deleted().isEmpty());
        assertTrue(store.queue().message(k).isPresent());
        assertTrue(store.queue().hasReceipt(k, "billing"));

        ApplyResult second = apply(delete(k, "audit"), 5);
        assertEquals(List.of(k), second.deleted());
        assertTrue(store.queue().message(k).isEmpty());
        assertFalse(store.queue().hasReceipt(k, "billing"), "receipts go with the message");
        List<EventKey> expired = new ArrayList<>();
        store.queue().scanExpired(Long.MAX_VALUE - 1, expired::add);
        assertTrue(expired.isEmpty(), "the expiry index entry goes with the message");
    }

    @Test
    void bothGroupsInOneBatchRemoveTheMessage() {
        apply(register("t", "a"), 1);
        apply(register("t", "b"), 2);
        EventKey k = apply(put("t", 0, 0, "m"), 3).published().get(0);
        Command.Builder both = delete(k, "a");
        both.getDeleteBatchBuilder().addDeletions(Deletion.newBuilder()
                .setEventKey(ByteString.copyFrom(k.toBytes())).setGroup("b"));
        assertEquals(List.of(k), apply(both, 4).deleted());
    }

    @Test
    void wildcardRemovesOutrightAndUnknownGroupsAndKeysChangeNothing() {
        apply(register("t", "a"), 1);
        EventKey k = apply(put("t", 0, 0, "m"), 2).published().get(0);
        assertTrue(apply(delete(k, "stranger"), 3).receipts().isEmpty());
        assertTrue(store.queue().message(k).isPresent());
        assertEquals(List.of(k), apply(delete(k, StateApplier.ALL_GROUPS), 4).deleted());
        assertTrue(apply(delete(k, StateApplier.ALL_GROUPS), 5).deleted().isEmpty(), "idempotent");
    }

    @Test
    void groupRegisteredLaterMustAlsoAcknowledge() {
        apply(register("t", "a"), 1);
        EventKey k = apply(put("t", 0, 0, "m"), 2).published().get(0);
        apply(register("t", "late"), 3);
        assertTrue(apply(delete(k, "a"), 4).deleted().isEmpty(), "'late' has not acknowledged yet");
        assertEquals(List.of(k), apply(delete(k, "late"), 5).deleted());
    }

    private static Command.Builder putWithId(String topic, String producerId, String payload) {
        return Command.newBuilder().setPut(PutCmd.newBuilder().addMessages(NewMessage.newBuilder().setTopic(topic)
                .setPayload(ByteString.copyFromUtf8(payload)).setProducerId(producerId)));
    }

    private int countMessages() {
        int[] n = {0};
        store.queue().scanAll((k, m) -> ++n[0] > 0);
        return n[0];
    }

    @Test
    void aRetriedPublishWithTheSameProducerIdStoresTheMessageOnce() {
        EventKey first = apply(putWithId("t", "p-1", "once"), 1_000).published().get(0);
        ApplyResult retry = apply(putWithId("t", "p-1", "once"), 2_000);
        assertEquals(List.of(first), retry.published(), "the retry answers with the first message's id");
        Command.Builder twiceInOneEntry = putWithId("t", "p-2", "a");
        twiceInOneEntry.getPutBuilder().addMessages(NewMessage.newBuilder().setTopic("t").setProducerId("p-2")
                .setPayload(ByteString.copyFromUtf8("a")));
        ApplyResult both = apply(twiceInOneEntry, 3_000);
        assertEquals(both.published().get(0), both.published().get(1));
        assertEquals(2, countMessages());
    }

    /** Retried, new and absent producer ids in one entry: each gets its own answer. */
    @Test
    void anEntryMixingRetriesNewIdsAndNoIdsStoresAllButTheRetries() {
        EventKey a = apply(putWithId("t", "p-a", "a"), 1_000).published().get(0);
        Command.Builder mixed = putWithId("t", "p-b", "b");
        mixed.getPutBuilder().addMessages(NewMessage.newBuilder().setTopic("t").setProducerId("p-a")
                .setPayload(ByteString.copyFromUtf8("a")))
                .addMessages(NewMessage.newBuilder().setTopic("t").setPayload(ByteString.copyFromUtf8("no id")));
        List<EventKey> keys = apply(mixed, 2_000).published();
        assertEquals(a, keys.get(1), "the retried id answers with the first message's key");
        assertTrue(!keys.get(0).equals(a) && !keys.get(2).equals(a) && !keys.get(0).equals(keys.get(2)));
        assertEquals(3, countMessages());
        assertEquals(java.util.Optional.of(keys.get(0)), store.keyOfProducerId("p-b"));
    }

    @Test
    void producerIdsAreForgottenAfterTheDedupWindow() {
        EventKey first = apply(putWithId("t", "p-1", "x"), 1_000).published().get(0);
        long later = 1_000 + ProducerIds.WINDOW_MS + 1;
        apply(put("t", 0, 0, "another"), later);
        assertTrue(store.keyOfProducerId("p-1").isEmpty(), "forgotten by the next entry after the window");
        EventKey again = apply(putWithId("t", "p-1", "x"), later + 1).published().get(0);
        assertTrue(!again.equals(first));
    }

    @Test
    void purgeRemovesEveryMessageOfTheTopicOnly() {
        apply(put("t", 0, 0, "a", "b"), 1);
        apply(put("t", 60_000, 1_000, "later"), 2);
        EventKey other = apply(put("u", 0, 0, "keep"), 3).published().get(0);
        ApplyResult r = apply(Command.newBuilder().setPurgeTopic(io.hourglass.core.proto.PurgeTopicCmd.newBuilder().setTopic("t")), 4);
        assertEquals(3, r.deleted().size());
        assertEquals(1, countMessages());
        assertTrue(store.queue().message(other).isPresent());
        List<EventKey> expiring = new ArrayList<>();
        store.queue().scanExpired(Long.MAX_VALUE - 1, expiring::add);
        assertTrue(expiring.isEmpty(), "expiry entries purged with their messages");
    }

    @Test
    void deletingAGroupReleasesMessagesThatOnlyItStillHeld() {
        apply(register("t", "a"), 1);
        apply(register("t", "b"), 2);
        EventKey ackedByA = apply(put("t", 0, 0, "m1"), 3).published().get(0);
        EventKey ackedByNone = apply(put("t", 0, 0, "m2"), 4).published().get(0);
        apply(delete(ackedByA, "a"), 5);
        ApplyResult r = apply(Command.newBuilder().setDeleteGroup(
                io.hourglass.core.proto.DeleteGroupCmd.newBuilder().setTopic("t").setGroup("b")), 6);
        assertEquals(List.of(ackedByA), r.deleted());
        assertTrue(store.queue().message(ackedByNone).isPresent(), "group a has not acknowledged it");
        assertEquals(java.util.Set.of("a"), store.durableGroups("t"));
    }

    @Test
    void peerAddressesAreReplicated() {
        apply(Command.newBuilder().setRegisterPeer(io.hourglass.core.proto.RegisterPeerCmd.newBuilder()
                .setId("n4").setGrpcAddress("10.0.0.4:7070")), 1);
        assertEquals(java.util.Optional.of("10.0.0.4:7070"), store.peerAddress("n4"));
    }

    @Test
    void malformedEntriesFailLoudly() {
        assertThrows(IllegalStateException.class, () -> apply(Command.newBuilder(), 1), "no body");
        assertThrows(IllegalStateException.class,
                () -> applier.apply(put("t", 0, 0, "x").build(), new TermIndex(1, ++index)), "no stamp");
        apply(put("t", 0, 0, "x"), 1);
        assertThrows(IllegalStateException.class,
                () -> applier.apply(put("t", 0, 0, "x").setStampedAtMs(1).build(), new TermIndex(1, index)),
                "an index already applied");
    }

    @Test
    void aCommandOfADomainNotRegisteredFailsWithoutWriting() {
        Command room = Command.newBuilder().setRoom(io.hourglass.core.proto.RoomCommand.newBuilder().setRoom("r")
                .setSend(io.hourglass.core.proto.RoomSendCmd.getDefaultInstance())).setStampedAtMs(1).build();
        assertThrows(IllegalStateException.class, () -> applier.apply(room, new TermIndex(1, 1)));
        assertEquals(TermIndex.INITIAL, store.appliedIndex(), "the entry was not applied");
    }

    @Test
    void aCommandKindOwnedTwiceIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new StateApplier(store, new QueueApplier(store)));
    }

    @Test
    void publishIsBuiltBesideItsApplier() {
        Command c = QueueCommands.publish(List.of(
                QueueCommands.message("t", ByteString.copyFromUtf8("a"), java.util.Map.of("k", "v"), 10, 20, "p-9")));
        EventKey k = apply(c.toBuilder(), 1_000).published().get(0);
        var m = store.queue().message(k).orElseThrow();
        assertEquals(1_010, m.getDueAtMs());
        assertEquals(1_030, m.getExpiresAtMs());
        assertEquals("v", m.getHeadersOrThrow("k"));
        assertEquals(java.util.Optional.of(k), store.keyOfProducerId("p-9"));
    }

    @Test
    void restartRecoversExactlyTheAppliedState() {
        apply(register("t", "g"), 1);
        EventKey kept = apply(put("t", 0, 1000, "kept"), 2).published().get(0);
        EventKey acked = apply(put("t", 0, 0, "acked"), 3).published().get(0);
        apply(delete(acked, "g"), 4);
        TermIndex before = store.appliedIndex();
        store.close();

        store = EventStore.open(dir.resolve("db"));
        assertEquals(before, store.appliedIndex());
        assertTrue(store.queue().message(kept).isPresent());
        assertTrue(store.queue().message(acked).isEmpty());
        assertEquals(java.util.Set.of("g"), store.durableGroups("t"));
        List<EventKey> expiring = new ArrayList<>();
        store.queue().scanExpired(Long.MAX_VALUE - 1, expiring::add);
        assertEquals(List.of(kept), expiring);
    }

    @Test
    void dueScanNeverReadsFutureMessagesOrOtherTopics() {
        EventKey due = apply(put("t", 0, 0, "due"), 100).published().get(0);
        apply(put("t", 50, 0, "later"), 100);
        apply(put("u", 0, 0, "other topic"), 100);
        List<EventKey> seen = new ArrayList<>();
        long hash = EventKey.topicHash("t");
        EventKey first = new EventKey(hash, 0, 0); // where a dispatcher pass starts a new recipient
        long next = store.queue().scanDueFrom(hash, first, 149, (k, v, receipts) -> seen.add(k));
        assertEquals(List.of(due), seen);
        assertEquals(150, next, "the first key not yet due tells when to look again");
        seen.clear();
        store.queue().scanDueFrom(hash, first, 150, (k, v, receipts) -> seen.add(k));
        assertEquals(2, seen.size());
    }

    @Test
    void theShardCountIsRecordedOnceAndAnotherIsRefused() {
        assertEquals(java.util.OptionalInt.empty(), store.clusterShards());
        assertEquals("", apply(ClusterCommands.layout(4).toBuilder(), 1000).reply().getRefused());
        assertEquals(java.util.OptionalInt.of(4), store.clusterShards());
        assertEquals("", apply(ClusterCommands.layout(4).toBuilder(), 1001).reply().getRefused(),
                "the same count again is fine (a new leader)");
        String refused = apply(ClusterCommands.layout(6).toBuilder(), 1002).reply().getRefused();
        assertTrue(refused.contains("created with 4 shards, not 6"), refused);
        assertEquals(java.util.OptionalInt.of(4), store.clusterShards(), "the refused record changed nothing");
        assertEquals(index, store.appliedIndex().index(), "every entry applied, the refused one too");
    }

    @Test
    void aPeersClientAddressIsRegistered() {
        apply(ClusterCommands.registerPeer("n4", "10.0.0.4:7070").toBuilder(), 1000);
        assertEquals(java.util.Optional.of("10.0.0.4:7070"), store.peerAddress("n4"));
        assertEquals(java.util.Optional.empty(), store.peerAddress("n5"));
    }
}
