package io.hourglass.core.rooms;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class RoomKeyTest {
    private static final Comparator<byte[]> UNSIGNED = Arrays::compareUnsigned;

    @Test
    void bytesSortLikeKeysPriorityFirstNegativesIncludedThenFifo() {
        Random rnd = new Random(7);
        List<RoomKey> keys = new ArrayList<>();
        int[] priorities = {Integer.MIN_VALUE, -1000, -1, 0, 1, 3, 1000, Integer.MAX_VALUE};
        for (int i = 0; i < 200; i++) {
            keys.add(RoomKey.of("room", priorities[rnd.nextInt(priorities.length)], rnd.nextInt(1000), rnd.nextInt(10)));
        }
        List<RoomKey> byKey = keys.stream().sorted().toList();
        List<RoomKey> byBytes = keys.stream().sorted((a, b) -> UNSIGNED.compare(a.toBytes(), b.toBytes())).toList();
        assertEquals(byKey, byBytes);
        for (int i = 1; i < byKey.size(); i++) {
            RoomKey a = byKey.get(i - 1);
            RoomKey b = byKey.get(i);
            assertTrue(a.priority() < b.priority() || (a.priority() == b.priority() && a.sequence() <= b.sequence()));
        }
    }

    @Test
    void sequenceComesFromTheLogIndexAndThePositionInTheEntry() {
        RoomKey k = RoomKey.of("r", 0, 5, 3);
        assertEquals(5L * 65536 + 3, k.sequence());
        assertEquals(RoomKey.roomHash("r"), k.roomHash());
    }

    @Test
    void theIdIsTheHexOfTheKeyAndParsesBack() {
        RoomKey k = RoomKey.of("r", -7, 42, 1);
        assertEquals(40, k.id().length());
        assertEquals(Optional.of(k), RoomKey.fromId(k.id()));
        assertEquals(k, RoomKey.fromBytes(k.toBytes()));
        assertEquals(Optional.empty(), RoomKey.fromId("nope"));
        assertEquals(Optional.empty(), RoomKey.fromId(RoomDelivery.OUT_OF_BAND_PREFIX + "123"));
        assertEquals(Optional.empty(), RoomKey.fromId(null));
        assertEquals(Optional.empty(), RoomKey.fromId("zz".repeat(20)));
    }

    @Test
    void aRoomsSettingsEntrySortsBeforeAllOfItsMessagesAndAfterThePreviousRoom() {
        long hash = RoomKey.roomHash("r");
        byte[] entry = RoomKey.roomEntryKey(hash);
        byte[] first = new RoomKey(hash, Integer.MIN_VALUE, 0).toBytes();
        assertTrue(UNSIGNED.compare(entry, first) < 0);
        byte[] last = new RoomKey(hash, Integer.MAX_VALUE, Long.MAX_VALUE).toBytes();
        if (hash != -1L) {
            assertTrue(UNSIGNED.compare(last, RoomKey.roomEntryKey(hash + 1)) < 0);
        }
    }
}
