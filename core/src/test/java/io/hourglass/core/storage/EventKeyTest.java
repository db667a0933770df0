package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class EventKeyTest {
    /** RocksDB's default comparator: unsigned lexicographic bytes. */
    private static int bytewise(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    @Test
    void roundTripsThroughBytesAndHex() {
        EventKey k = new EventKey(-42L, 1_700_000_000_123L, 99L * EventKey.MAX_MESSAGES_PER_ENTRY + 3);
        assertEquals(EventKey.LENGTH, k.toBytes().length);
        assertEquals(k, EventKey.fromBytes(k.toBytes()));
        assertEquals(k, EventKey.fromHex(k.toHex()));
    }

    @Test
    void bytesSortByTopicThenDueTimeThenSequence() {
        Random r = new Random(7);
        List<EventKey> keys = new ArrayList<>();
        long[] hashes = {0L, 1L, Long.MAX_VALUE, Long.MIN_VALUE, -1L};
        for (int i = 0; i < 500; i++) {
            keys.add(new EventKey(hashes[r.nextInt(hashes.length)], r.nextInt(1000), r.nextInt(1000)));
        }
        for (EventKey a : keys) {
            for (EventKey b : keys.subList(0, 50)) {
                assertEquals(Integer.signum(a.compareTo(b)), Integer.signum(bytewise(a.toBytes(), b.toBytes())),
                        a + " vs " + b);
            }
        }
        EventKey earlyHighSeq = new EventKey(5, 100, 9_999);
        EventKey laterLowSeq = new EventKey(5, 101, 0);
        assertTrue(bytewise(earlyHighSeq.toBytes(), laterLowSeq.toBytes()) < 0, "due time outranks sequence");
        EventKey otherTopicEarlier = new EventKey(6, 0, 0);
        assertTrue(bytewise(laterLowSeq.toBytes(), otherTopicEarlier.toBytes()) < 0, "topic outranks due time");
    }

    @Test
    void scanBoundsCoverExactlyTheDueKeysOfOneTopic() {
        long topic = EventKey.topicHash("orders");
        long now = 1_000;
        byte[] start = EventKey.scanStart(topic);
        byte[] end = EventKey.scanEnd(topic, now);
        EventKey dueNow = new EventKey(topic, now, Long.MAX_VALUE);
        EventKey dueEarliest = new EventKey(topic, 0, 0);
        EventKey future = new EventKey(topic, now + 1, 0);
        EventKey otherTopic = new EventKey(topic + 1, 0, 0);
        assertTrue(bytewise(start, dueEarliest.toBytes()) <= 0);
        assertTrue(bytewise(dueNow.toBytes(), end) < 0, "a key due exactly now is inside");
        assertTrue(bytewise(future.toBytes(), end) >= 0, "a key due 1 ms later is outside");
        assertTrue(bytewise(otherTopic.toBytes(), end) > 0);
        assertArrayEquals(new EventKey(topic, 0, 0).toBytes(), start);
    }

    @Test
    void sequenceIsDerivedFromLogIndexAndPosition() {
        EventKey a = EventKey.of("t", 10, 7, 0);
        EventKey b = EventKey.of("t", 10, 7, 1);
        EventKey c = EventKey.of("t", 10, 8, 0);
        assertTrue(a.compareTo(b) < 0 && b.compareTo(c) < 0);
        assertEquals(EventKey.of("t", 10, 7, 1), b, "deterministic: every replica writes the same key");
        assertThrows(IllegalArgumentException.class, () -> EventKey.of("t", 10, 7, EventKey.MAX_MESSAGES_PER_ENTRY));
    }

    @Test
    void equalKeysAreEqualAndHashAlikeAndEachFieldTells() {
        EventKey k = new EventKey(-42L, 1_700_000_000_123L, 99L * EventKey.MAX_MESSAGES_PER_ENTRY + 3);
        EventKey same = EventKey.fromBytes(k.toBytes());
        assertEquals(k, same);
        assertEquals(k.hashCode(), same.hashCode());
        assertNotEquals(k, new EventKey(-41L, k.dueAtMs(), k.sequence()));
        assertNotEquals(k, new EventKey(k.topicHash(), k.dueAtMs() + 1, k.sequence()));
        assertNotEquals(k, new EventKey(k.topicHash(), k.dueAtMs(), k.sequence() + 1));
        assertNotEquals(k, (Object) k.toHex());
        // Keys of one entry differ only in the sequence's low bits: their hashes spread.
        java.util.Set<Integer> hashes = new java.util.HashSet<>();
        for (int i = 0; i < 1000; i++) {
            hashes.add(EventKey.of("t", 10, 7, i).hashCode() & 1023);
        }
        assertTrue(hashes.size() > 500, "buckets used: " + hashes.size());
    }

    @Test
    void rejectsMalformedInput() {
        assertThrows(IllegalArgumentException.class, () -> EventKey.fromBytes(new byte[23]));
        assertThrows(IllegalArgumentException.class, () -> EventKey.fromHex("zz"));
        assertThrows(IllegalArgumentException.class, () -> new EventKey(1, -1, 0));
    }
}
