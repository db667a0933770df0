package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.StoredMessage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A topic's figures from counters and key indexes ({@link TopicFigures}) equal what reading every
 * message of the topic gives — after publishes, deletes and counters built midway — and a dense
 * hour is read only up to the limit on each side of now, then estimated within what the reads proved.
 */
@Timeout(60)
class TopicFiguresTest {
    private static final long HOUR = DueCounts.HOUR_MS;
    private static final long[] HORIZONS = {60_000, HOUR, 24 * HOUR};
    private static final long T0 = 1_000 * HOUR + 17 * 60_000; // 17 minutes into an hour
    private long index;

    private EventKey put(EventStore store, String topic, long dueAtMs, long expiresAtMs) {
        StoreBatch batch = store.newBatch();
        EventKey key = EventKey.of(topic, dueAtMs, ++index, 0);
        batch.putMessage(key, StoredMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8("x"))
                .setDueAtMs(dueAtMs).setExpiresAtMs(expiresAtMs).build());
        store.commit(batch, new TermIndex(1, index));
        return key;
    }

    /** What reading every message of the topic counts (the way `topic stats` used to). */
    private static long[] byReading(EventStore store, String topic, long now) {
        long[] c = new long[3 + HORIZONS.length]; // pending, due, first due, within…
        c[2] = Long.MAX_VALUE;
        store.queue().scanTopic(topic, (k, m) -> {
            c[0]++;
            if (m.getDueAtMs() <= now) {
                c[1]++;
            }
            c[2] = Math.min(c[2], m.getDueAtMs());
            for (int i = 0; i < HORIZONS.length; i++) {
                if (m.getDueAtMs() <= now + HORIZONS[i]) {
                    c[3 + i]++;
                }
            }
            return true;
        });
        if (c[0] == 0) {
            c[2] = 0;
        }
        return c;
    }

    private static long[] fromFigures(EventStore store, String topic, long now) {
        TopicFigures.Due d = store.topicFigures().due(topic, now, HORIZONS);
        long[] c = new long[3 + HORIZONS.length];
        c[0] = d.pending();
        c[1] = d.dueNow();
        c[2] = d.firstDueAtMs();
        System.arraycopy(d.dueWithin(), 0, c, 3, HORIZONS.length);
        return c;
    }

    @Test
    void equalToReadingEveryMessageThroughPublishesAndDeletes(@TempDir Path dir) {
        Random random = new Random(7);
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            List<EventKey> keys = new ArrayList<>();
            for (int i = 0; i < 600; i++) {
                keys.add(put(store, "t" + i % 3, T0 + (long) (random.nextGaussian() * 3 * HOUR), 0));
            }
            assertFiguresExact(store, random); // builds the counters
            java.util.Collections.shuffle(keys, random);
            for (EventKey k : keys.subList(0, 250)) {
                StoreBatch batch = store.newBatch();
                batch.deleteMessage(k, store.queue().message(k).orElseThrow());
                store.commit(batch, new TermIndex(1, ++index));
            }
            for (int i = 0; i < 200; i++) {
                put(store, "t" + i % 4, T0 + random.nextInt((int) (30 * HOUR)) - 2 * HOUR, 0);
            }
            assertFiguresExact(store, random); // kept up by the commits
            assertArrayEquals(new long[] {0, 0, 0, 0, 0, 0}, fromFigures(store, "none", T0));
        }
    }

    private void assertFiguresExact(EventStore store, Random random) {
        for (int n = 0; n < 40; n++) {
            long now = T0 + random.nextInt((int) (8 * HOUR)) - 4 * HOUR;
            for (String topic : List.of("t0", "t1", "t2", "t3")) {
                assertArrayEquals(byReading(store, topic, now), fromFigures(store, topic, now), topic + " at " + now);
                long until = now + random.nextInt((int) HOUR);
                List<Long> read = new ArrayList<>();
                store.queue().scanTopic(topic, (k, m) -> (m.getDueAtMs() < now || m.getDueAtMs() >= until || read.add(m.getDueAtMs())));
                List<Long> window = new ArrayList<>();
                store.topicFigures().dueTimes(topic, now, until, window::add);
                assertEquals(read, window, "due times in a window");
            }
        }
    }

    @Test
    void aDenseHourIsReadUpToTheLimitOnEachSideThenEstimated(@TempDir Path dir) {
        long limit = TopicFigures.EXACT_HOUR_LIMIT;
        long hourStart = Math.floorDiv(T0, HOUR) * HOUR;
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            // One batch due in the hour's first seconds (all before now), one far ahead.
            StoreBatch batch = store.newBatch();
            for (int i = 0; i < 3 * limit; i++) {
                EventKey k = EventKey.of("bulk", hourStart + i % 5_000, ++index, 0);
                batch.putMessage(k, StoredMessage.newBuilder().setTopic("bulk").setDueAtMs(k.dueAtMs()).build());
            }
            store.commit(batch, new TermIndex(1, ++index));
            assertArrayEquals(byReading(store, "bulk", T0), fromFigures(store, "bulk", T0), "one side small: exact");

            // Both sides of now dense: estimated, never outside what the reads proved.
            batch = store.newBatch();
            for (int i = 0; i < 3 * limit; i++) {
                EventKey k = EventKey.of("dense", hourStart + (long) i * HOUR / (3 * limit), ++index, 0);
                batch.putMessage(k, StoredMessage.newBuilder().setTopic("dense").setDueAtMs(k.dueAtMs()).build());
            }
            store.commit(batch, new TermIndex(1, ++index));
            long now = hourStart + HOUR / 2;
            TopicFigures.Due d = store.topicFigures().due("dense", now, HORIZONS);
            assertEquals(3 * limit, d.pending());
            assertTrue(d.dueNow() > limit && d.dueNow() < 2 * limit, "estimated within the proven bounds: " + d.dueNow());
            assertEquals(byReading(store, "dense", now)[1], d.dueNow(), 3 * limit / 100.0, "pro rata: close when spread evenly");
            assertEquals(3 * limit, d.dueWithin()[1], "a whole window beyond the hour is counted exactly");
        }
    }

    @Test
    void expiringReceiptsAndDeliveryCountsAreReadFromTheirIndexesPerTopic(@TempDir Path dir) {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            List<EventKey> a = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                a.add(put(store, "a", T0, i < 4 ? T0 + i * 20_000 : 0));
                put(store, "b", T0, T0 + 1_000); // another topic's: never counted for a
            }
            StoreBatch batch = store.newBatch();
            for (int i = 0; i < 6; i++) {
                batch.putReceipt(a.get(i), "fast");
            }
            batch.putReceipt(a.get(9), "slow");
            batch.putDeliveryCount(a.get(7), "slow", 2);
            batch.putDeliveryCount(a.get(8), "slow", 6);
            store.commit(batch, new TermIndex(1, ++index));

            assertEquals(3, store.topicFigures().expiringBy("a", T0 + 59_999), "TTLs ending within the window");
            assertEquals(4, store.topicFigures().expiringBy("a", T0 + 60_000));
            assertEquals(Map.of("fast", 6L, "slow", 1L), store.topicFigures().receipts("a"));
            Map<String, Integer> counts = new TreeMap<>();
            store.topicFigures().deliveryCounts("a", (k, g, n) -> {
                counts.merge(k.toHex() + "/" + g, n, Integer::sum);
                return true;
            });
            assertEquals(Map.of(a.get(7).toHex() + "/slow", 2, a.get(8).toHex() + "/slow", 6), counts);
        }
    }
}
