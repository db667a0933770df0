package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.QueueApplier;
import io.hourglass.core.command.QueueCommands;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The due view's counts from the time index's keys: per window over all topics, and per topic in time order. */
@Timeout(30)
class DueCountTest {
    private static final long STAMP = 1_000_000;

    private static void put(StateApplier applier, long index, String topic, long... delaysMs) {
        PutCmd.Builder put = PutCmd.newBuilder();
        for (long d : delaysMs) {
            put.addMessages(NewMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8("x")).setDelayMs(d));
        }
        applier.apply(Command.newBuilder().setPut(put).setStampedAtMs(STAMP).build(), new TermIndex(1, index));
    }

    @Test
    void countsMessagesDueAfterNowWithinEachWindowAcrossTopics(@TempDir Path dir) {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            StateApplier applier = new StateApplier(store);
            put(applier, 1, "a", 0, 30_000, 60_000, 3_600_000, 90_000_000);
            put(applier, 2, "b", 59_000, 7_200_000);
            put(applier, 3, "c", 0);

            long[] counts = store.queue().countDueWithin(STAMP, 60_000, 3_600_000, 86_400_000);

            assertArrayEquals(new long[] {3, 4, 5}, counts,
                    "due now is not counted; a:30s,60s b:59s within 1m; +a:1h; +b:2h; a:25h beyond a day");
            assertArrayEquals(new long[] {0, 0, 0}, store.queue().countDueWithin(STAMP + 100_000_000, 60_000, 3_600_000, 86_400_000));
        }
    }

    /**
     * The whole minutes of a window come from counts kept per minute, built by the first count and
     * kept up by every commit after it: after more publishes and deletes, a second removal of the
     * same message in one entry, and a checkpoint installed over the store, each window still counts
     * exactly what a read of every key counts.
     */
    @Test
    void countsKeptPerMinuteStayExactThroughPublishesDeletesAndACheckpointInstall(@TempDir Path dir) {
        java.util.Random random = new java.util.Random(42);
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            StateApplier applier = new StateApplier(store);
            long index = 1;
            for (; index <= 20; index++) {
                put(applier, index, "t" + index % 4, randomDelays(random, 50));
            }
            assertCountsExact(store, random); // builds the per-minute counts
            List<EventKey> stored = new ArrayList<>();
            store.queue().scanAll((k, m) -> stored.add(k));
            java.util.Collections.shuffle(stored, random);
            for (EventKey k : stored.subList(0, 300)) {
                String topic = "t" + (k.sequence() / EventKey.MAX_MESSAGES_PER_ENTRY) % 4;
                applier.apply(QueueCommands.deleteMessage(topic, k).toBuilder().setStampedAtMs(STAMP).build(),
                        new TermIndex(1, index++));
            }
            io.hourglass.core.proto.DeleteBatchCmd.Builder twice = io.hourglass.core.proto.DeleteBatchCmd.newBuilder();
            for (EventKey k : List.of(stored.get(300), stored.get(300), stored.get(301))) {
                twice.addDeletions(io.hourglass.core.proto.Deletion.newBuilder()
                        .setEventKey(ByteString.copyFrom(k.toBytes())).setGroup(QueueApplier.ALL_GROUPS));
            }
            applier.apply(Command.newBuilder().setDeleteBatch(twice).setStampedAtMs(STAMP).build(), new TermIndex(1, index++));
            for (int i = 0; i < 10; i++, index++) {
                put(applier, index, "u" + i % 3, randomDelays(random, 40));
            }
            assertEquals(1000 - 302 + 400, countAll(store));
            assertCountsExact(store, random);

            Path checkpoint = dir.resolve("checkpoint");
            try (EventStore other = EventStore.open(dir.resolve("other"))) {
                StateApplier otherApplier = new StateApplier(other);
                for (long i = 1; i <= 5; i++) {
                    put(otherApplier, i, "v", randomDelays(random, 30));
                }
                other.checkpoint(checkpoint);
            }
            store.restoreFrom(checkpoint);
            assertEquals(150, countAll(store));
            assertCountsExact(store, random);
        }
    }

    /**
     * A window's end minute that holds more than {@link QueueStore#EXACT_MINUTE_LIMIT} messages is not
     * read key by key (millions of keys per minute made one count take seconds). Its part of the
     * minute stays exact when that part or the rest of the minute is small — a batch published with
     * one delay fills the first seconds of a minute — and is estimated pro rata from the minute's count
     * only when both are large: 44 000 messages in the first and last 5 s of a minute count as 33 000
     * for its last 45 s (its keys say 22 000). Sparse minutes and whole minutes stay exact.
     */
    @Test
    void aDenseEndMinuteIsReadOnlyUpToALimitAndEstimatedOnlyWhenBothSidesAreLarge(@TempDir Path dir) {
        long base = 100 * DueCounts.MINUTE_MS;
        long bulk = base + 2 * DueCounts.MINUTE_MS;
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            StateApplier applier = new StateApplier(store);
            long[] dense = new long[44_000]; // 22 000 in the minute's first 5 s, 22 000 in its last 5 s
            for (int i = 0; i < 22_000; i++) {
                dense[i] = base - STAMP + i * 5_000L / 22_000;
                dense[22_000 + i] = base + 55_000 - STAMP + i * 5_000L / 22_000;
            }
            put(applier, 1, "dense", dense);
            long[] sparse = new long[100];
            for (int j = 0; j < sparse.length; j++) {
                sparse[j] = base + DueCounts.MINUTE_MS - STAMP + j * 600L;
            }
            put(applier, 2, "sparse", sparse);
            long[] batch = new long[30_000]; // one publish with one delay: the first 3 s of a minute
            for (int i = 0; i < batch.length; i++) {
                batch[i] = bulk - STAMP + i / 10;
            }
            put(applier, 3, "bulk", batch);
            long[] horizons = {5_000, 60_000, 3_600_000};

            assertArrayEquals(new long[] {0, 33_000 + 25, 33_000 + 100 + 30_000}, store.queue().countDueWithin(base + 14_999, horizons),
                    "5 s holding nothing: read, 0; the dense minute's last 45 s: 33 000 pro rata; the rest exact");
            assertArrayEquals(new long[] {0, 0, 44_100 + 30_000}, store.queue().countDueWithin(bulk + 10_000 - 3_600_000, horizons),
                    "the hour ends 10 s into the bulk minute: its 30 000 counted exactly (the rest of the minute is empty)");
            assertArrayEquals(new long[] {0, 22_000, 74_100}, store.queue().countDueWithin(base - 30_001, horizons),
                    "whole minutes are exact");
            assertArrayEquals(new long[] {9, 95 + 30_000, 95 + 30_000}, store.queue().countDueWithin(base + 62_999, horizons),
                    "from the sparse minute: exact; the minute's window ends 3 s into the bulk one, past all of it");
        }
    }

    private static long[] randomDelays(java.util.Random random, int n) {
        long[] delays = new long[n];
        for (int i = 0; i < n; i++) {
            // a third on whole-minute boundaries, the rest anywhere within three days
            delays[i] = i % 3 == 0 ? 60_000L * random.nextInt(4_000) : (long) (random.nextDouble() * 3 * 86_400_000L);
        }
        return delays;
    }

    private static long countAll(EventStore store) {
        long[] n = {0};
        store.queue().scanAll((k, m) -> ++n[0] > 0);
        return n[0];
    }

    /** Every window, at several instants (on and off minute boundaries), against a read of every key. */
    private static void assertCountsExact(EventStore store, java.util.Random random) {
        List<Long> due = new ArrayList<>();
        store.queue().scanAll((k, m) -> due.add(k.dueAtMs()));
        long[] horizons = {60_000, 3_600_000, 86_400_000};
        for (long now : new long[] {STAMP, STAMP + 59_999, STAMP + 120_000, STAMP + random.nextInt(200_000_000)}) {
            long[] expected = new long[horizons.length];
            for (int i = 0; i < horizons.length; i++) {
                long h = horizons[i];
                expected[i] = due.stream().filter(d -> d > now && d <= now + h).count();
            }
            assertArrayEquals(expected, store.queue().countDueWithin(now, horizons), "windows at " + now);
        }
    }

    @Test
    void aTopicsDueTimesComeInOrderFromItsKeysAlone(@TempDir Path dir) {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            StateApplier applier = new StateApplier(store);
            put(applier, 1, "a", 5_000, 1_000);
            put(applier, 2, "b", 2_000);
            List<Long> due = new ArrayList<>();
            store.topicFigures().dueTimes("a", 0, Long.MAX_VALUE, due::add);
            assertEquals(List.of(STAMP + 1_000, STAMP + 5_000), due);
        }
    }
}
