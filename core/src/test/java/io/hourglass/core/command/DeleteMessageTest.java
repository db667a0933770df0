package io.hourglass.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.DeleteBatchCmd;
import io.hourglass.core.proto.DeleteMessageCmd;
import io.hourglass.core.proto.Deletion;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.proto.RegisterGroupCmd;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.TermIndex;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code DeleteMessageCmd}: one message, its expiry entry and its receipts go in one batch, on every replica alike. */
@Timeout(30)
class DeleteMessageTest {
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

    private static Command.Builder deleteMessage(String topic, EventKey key) {
        return Command.newBuilder().setDeleteMessage(DeleteMessageCmd.newBuilder().setTopic(topic)
                .setEventKey(ByteString.copyFrom(key.toBytes())));
    }

    @Test
    void deletesTheMessageWithItsExpiryEntryAndReceipts() {
        apply(Command.newBuilder().setRegisterGroup(RegisterGroupCmd.newBuilder().setTopic("t").setGroup("a")), 1);
        apply(Command.newBuilder().setRegisterGroup(RegisterGroupCmd.newBuilder().setTopic("t").setGroup("b")), 1);
        ApplyResult put = apply(Command.newBuilder().setPut(PutCmd.newBuilder()
                .addMessages(NewMessage.newBuilder().setTopic("t").setPayload(ByteString.copyFromUtf8("x")).setTtlMs(5_000))
                .addMessages(NewMessage.newBuilder().setTopic("t").setPayload(ByteString.copyFromUtf8("y")))), 10);
        EventKey doomed = put.published().get(0);
        EventKey kept = put.published().get(1);
        apply(Command.newBuilder().setDeleteBatch(DeleteBatchCmd.newBuilder().addDeletions(Deletion.newBuilder()
                .setEventKey(ByteString.copyFrom(doomed.toBytes())).setGroup("a"))), 11);
        assertTrue(store.queue().hasReceipt(doomed, "a"));

        ApplyResult r = apply(deleteMessage("t", doomed), 12);

        assertEquals(List.of(doomed), r.deleted(), "listed as deleted: every replica clears it from in-flight");
        assertEquals(1, r.reply().getDeletedCount());
        assertTrue(store.queue().message(doomed).isEmpty());
        assertFalse(store.queue().hasReceipt(doomed, "a"));
        List<EventKey> expired = new ArrayList<>();
        store.queue().scanExpired(Long.MAX_VALUE, expired::add);
        assertEquals(List.of(), expired, "its expiry entry went with it");
        assertTrue(store.queue().message(kept).isPresent());
    }

    @Test
    void aKeyOfAnotherTopicOrOfNothingChangesNothing() {
        EventKey key = apply(Command.newBuilder().setPut(PutCmd.newBuilder()
                .addMessages(NewMessage.newBuilder().setTopic("t").setPayload(ByteString.copyFromUtf8("x")))), 10)
                .published().get(0);

        ApplyResult wrongTopic = apply(deleteMessage("other", key), 11);
        assertEquals(0, wrongTopic.reply().getDeletedCount());
        assertTrue(store.queue().message(key).isPresent());

        assertEquals(1, apply(deleteMessage("t", key), 12).reply().getDeletedCount());
        ApplyResult again = apply(deleteMessage("t", key), 13);
        assertEquals(0, again.reply().getDeletedCount());
        assertEquals(new TermIndex(1, index), store.appliedIndex());
    }
}
