package io.hourglass.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.UnavailableException;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.proto.RegisterGroupCmd;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.TermIndex;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Group commit of publishes: requests that queue while entries are out share one entry, each gets its own keys. */
@Timeout(30)
class PublishCoalescerTest {
    @TempDir
    Path dir;

    /** Applies to a real store when the test releases an entry, as if it committed then. */
    private static final class HeldReplicator implements Replicator {
        final StateApplier applier;
        final List<Command> proposed = new ArrayList<>();
        final List<CompletableFuture<CommandReply>> replies = new ArrayList<>();
        long index;

        HeldReplicator(StateApplier applier) {
            this.applier = applier;
        }

        @Override
        public synchronized CompletableFuture<CommandReply> propose(Command command) {
            proposed.add(command.toBuilder().setStampedAtMs(1_000 + proposed.size()).build());
            CompletableFuture<CommandReply> f = new CompletableFuture<>();
            replies.add(f);
            return f;
        }

        void commit(int i) {
            replies.get(i).complete(applier.apply(proposed.get(i), new TermIndex(1, ++index)).reply());
        }

        @Override
        public boolean isLeader() {
            return true;
        }
    }

    private static Command put(String topic, String... payloadsAndIds) {
        PutCmd.Builder b = PutCmd.newBuilder();
        for (String p : payloadsAndIds) {
            String[] parts = p.split("@");
            NewMessage.Builder m = NewMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8(parts[0]));
            if (parts.length > 1) {
                m.setProducerId(parts[1]);
            }
            b.addMessages(m);
        }
        return Command.newBuilder().setPut(b).build();
    }

    private static List<String> payloads(EventStore store, CommandReply reply) {
        return reply.getPublishedKeysList().stream()
                .map(k -> store.queue().message(EventKey.fromBytes(k.toByteArray())).orElseThrow().getPayload().toStringUtf8())
                .toList();
    }

    @Test
    void requestsQueuedWhileTheSlotIsBusyShareOneEntryAndGetTheirOwnKeys() {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            HeldReplicator raft = new HeldReplicator(new StateApplier(store));
            PublishCoalescer c = new PublishCoalescer(raft, 1, 1 << 20);
            var first = c.propose(put("t", "a"));
            assertEquals(1, raft.proposed.size(), "a lone request goes out at once");
            var second = c.propose(put("t", "b1", "b2"));
            var third = c.propose(put("u", "c"));
            var fourth = c.propose(put("t", "d1", "d2", "d3"));
            assertEquals(1, raft.proposed.size(), "the others wait for the slot");
            raft.commit(0);
            assertEquals(List.of("a"), payloads(store, first.join()));
            assertEquals(2, raft.proposed.size(), "then go out together");
            assertEquals(6, raft.proposed.get(1).getPut().getMessagesCount());
            raft.commit(1);
            assertEquals(List.of("b1", "b2"), payloads(store, second.join()));
            assertEquals(List.of("c"), payloads(store, third.join()));
            assertEquals(List.of("d1", "d2", "d3"), payloads(store, fourth.join()));
            assertEquals(1_001, second.join().getStampedAtMs());
            assertEquals(2, c.entries());
            assertEquals(4, c.requests());
        }
    }

    @Test
    void aRetriedProducerIdInTheSameMergedEntryGetsTheFirstKey() {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            HeldReplicator raft = new HeldReplicator(new StateApplier(store));
            PublishCoalescer c = new PublishCoalescer(raft, 1, 1 << 20);
            c.propose(put("t", "x"));
            var original = c.propose(put("t", "once@p1"));
            var retry = c.propose(put("t", "once-again@p1"));
            raft.commit(0);
            raft.commit(1);
            assertEquals(original.join().getPublishedKeys(0), retry.join().getPublishedKeys(0));
        }
    }

    @Test
    void anEntryIsCutAtTheByteLimitAndOtherCommandsPassStraightThrough() {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            HeldReplicator raft = new HeldReplicator(new StateApplier(store));
            PublishCoalescer c = new PublishCoalescer(raft, 1, 3_000);
            String kb = "k".repeat(1_000);
            c.propose(put("t", "first"));
            for (int i = 0; i < 5; i++) {
                c.propose(put("t", kb));
            }
            c.propose(Command.newBuilder().setRegisterGroup(RegisterGroupCmd.newBuilder().setTopic("t").setGroup("g")).build());
            assertEquals(2, raft.proposed.size(), "a non-publish command does not queue");
            raft.commit(0);
            assertEquals(2, raft.proposed.get(2).getPut().getMessagesCount(), "two 1 kB requests fit 3 000 bytes");
        }
    }

    @Test
    void aFailedEntryFailsEveryRequestItCarried() {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            HeldReplicator raft = new HeldReplicator(new StateApplier(store));
            PublishCoalescer c = new PublishCoalescer(raft, 1, 1 << 20);
            var first = c.propose(put("t", "a"));
            var second = c.propose(put("t", "b"));
            var third = c.propose(put("t", "c"));
            raft.replies.get(0).completeExceptionally(new UnavailableException("lost leadership", null));
            assertThrows(CompletionException.class, first::join);
            raft.replies.get(1).completeExceptionally(new UnavailableException("lost leadership", null));
            CompletionException e = assertThrows(CompletionException.class, second::join);
            assertInstanceOf(UnavailableException.class, e.getCause());
            assertTrue(third.isCompletedExceptionally());
        }
    }

    @Test
    void onceEveryEntryOutIsStuckOneMoreEntryGoesWithWhatQueued() {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            HeldReplicator raft = new HeldReplicator(new StateApplier(store));
            long[] now = {0};
            long ms = 1_000_000;
            PublishCoalescer c = new PublishCoalescer(raft, 1, 1 << 20, () -> now[0]);
            var first = c.propose(put("t", "a"));
            now[0] = 10 * ms;
            var second = c.propose(put("t", "b"));
            assertEquals(1, raft.proposed.size(), "an entry out for 10 ms is not stuck: the request waits");
            now[0] = PublishCoalescer.STUCK_NANOS;
            var third = c.propose(put("t", "c"));
            assertEquals(2, raft.proposed.size(), "the first entry is stuck: one more goes");
            assertEquals(2, raft.proposed.get(1).getPut().getMessagesCount(), "with every request that queued");
            now[0] += 10 * ms;
            var fourth = c.propose(put("t", "d"));
            assertEquals(2, raft.proposed.size(), "never more than one past the limit");
            raft.commit(0);
            assertEquals(2, raft.proposed.size(), "back at the limit, with an entry out for less than the stuck time");
            raft.commit(1);
            assertEquals(3, raft.proposed.size());
            raft.commit(2);
            assertEquals(List.of("a"), payloads(store, first.join()));
            assertEquals(List.of("b"), payloads(store, second.join()));
            assertEquals(List.of("c"), payloads(store, third.join()));
            assertEquals(List.of("d"), payloads(store, fourth.join()));
            assertEquals(1, c.entriesPastLimit());
        }
    }
}
