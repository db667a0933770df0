package io.hourglass.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.TermIndex;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Schedule keys (DESIGN §9): one pending message per key and topic; a publish with the key replaces it. */
@Timeout(30)
class ScheduleKeyTest {
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

    private static NewMessage.Builder keyed(String topic, String key, String payload, long delayMs, long ttlMs) {
        return NewMessage.newBuilder().setTopic(topic).setKey(key).setPayload(ByteString.copyFromUtf8(payload))
                .setDelayMs(delayMs).setTtlMs(ttlMs);
    }

    private ApplyResult put(long stamp, NewMessage.Builder... messages) {
        PutCmd.Builder put = PutCmd.newBuilder();
        for (NewMessage.Builder m : messages) {
            put.addMessages(m);
        }
        return applier.apply(Command.newBuilder().setPut(put).setStampedAtMs(stamp).build(), new TermIndex(1, ++index));
    }

    private static EventKey replaced(ApplyResult r, int i) {
        CommandReply reply = r.reply();
        assertEquals(reply.getPublishedKeysCount(), reply.getReplacedKeysCount(), "one replaced slot per published key");
        ByteString b = reply.getReplacedKeys(i);
        return b.isEmpty() ? null : EventKey.fromBytes(b.toByteArray());
    }

    private List<EventKey> expiring() {
        List<EventKey> out = new ArrayList<>();
        store.queue().scanExpired(Long.MAX_VALUE, out::add);
        return out;
    }

    @Test
    void aSecondPublishWithTheKeyReplacesPayloadDueTimeAndTtlAndNamesTheReplacedId() {
        EventKey first = put(1_000, keyed("t", "order-7", "v1", 60_000, 5_000)).published().get(0);
        assertEquals(Optional.of(first), store.queue().keyed("t", "order-7"));

        ApplyResult second = put(2_000, keyed("t", "order-7", "v2", 10_000, 0));

        EventKey now = second.published().get(0);
        assertEquals(first, replaced(second, 0));
        assertEquals(List.of(first), second.deleted(), "every replica drops in-flight copies of the replaced one");
        assertTrue(store.queue().message(first).isEmpty());
        assertEquals("v2", store.queue().message(now).orElseThrow().getPayload().toStringUtf8());
        assertEquals(12_000, now.dueAtMs(), "the new delay counts from the new publish");
        assertEquals(List.of(), expiring(), "the replaced TTL went with it; the new one has none");
        assertEquals(Optional.of(now), store.queue().keyed("t", "order-7"));
    }

    @Test
    void keysAreScopedByTopicAndMessagesWithoutAKeyReplaceNothing() {
        EventKey a = put(1_000, keyed("a", "k", "x", 60_000, 0)).published().get(0);
        ApplyResult other = put(1_100, keyed("b", "k", "y", 60_000, 0), NewMessage.newBuilder().setTopic("a")
                .setPayload(ByteString.copyFromUtf8("plain")).setDelayMs(60_000));

        assertTrue(other.deleted().isEmpty());
        assertEquals(0, other.reply().getReplacedKeysCount(), "nothing replaced: nothing answered");
        assertTrue(store.queue().message(a).isPresent());
        assertEquals(Optional.of(a), store.queue().keyed("a", "k"));
    }

    @Test
    void withinOneEntryTheLastMessageWithAKeyIsTheOneKept() {
        ApplyResult r = put(1_000, keyed("t", "k", "one", 60_000, 0), keyed("t", "k", "two", 60_000, 0));

        EventKey one = r.published().get(0);
        EventKey two = r.published().get(1);
        assertEquals(one, replaced(r, 1));
        assertEquals(null, replaced(r, 0));
        assertTrue(store.queue().message(one).isEmpty());
        assertEquals(Optional.of(two), store.queue().keyed("t", "k"));
    }

    @Test
    void theKeyIsFreedWhenItsMessageGoesAnotherWayAndThenReplacesNothing() {
        EventKey first = put(1_000, keyed("t", "k", "v1", 60_000, 0)).published().get(0);
        applier.apply(QueueCommands.deleteMessage("t", first).toBuilder().setStampedAtMs(1_500).build(),
                new TermIndex(1, ++index));
        assertEquals(Optional.empty(), store.queue().keyed("t", "k"));

        ApplyResult again = put(2_000, keyed("t", "k", "v2", 60_000, 0));

        assertTrue(again.deleted().isEmpty());
        assertEquals(Optional.of(again.published().get(0)), store.queue().keyed("t", "k"));
    }

    @Test
    void aRetriedPublishWithTheSameProducerIdReplacesNothingAndAnswersTheFirstId() {
        ApplyResult first = put(1_000, keyed("t", "k", "v1", 60_000, 0).setProducerId("p1"));
        ApplyResult retry = put(1_200, keyed("t", "k", "v1", 60_000, 0).setProducerId("p1"));

        assertEquals(first.published(), retry.published());
        assertTrue(retry.deleted().isEmpty());
        assertTrue(store.queue().message(first.published().get(0)).isPresent());
    }
}
