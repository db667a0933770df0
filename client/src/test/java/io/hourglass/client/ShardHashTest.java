package io.hourglass.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ShardHashTest {
    private static long xxh(String s) {
        return ShardHash.xxHash64(s.getBytes(StandardCharsets.UTF_8));
    }

    /** The published XXH64 vectors (seed 0): what a client in another language checks itself against. */
    @Test
    void matchesTheReferenceVectors() {
        assertEquals(0xEF46DB3751D8E999L, xxh(""));
        assertEquals(0x44BC2CF5AD770999L, xxh("abc"));
        // 39 bytes: a 32-byte stripe, a 4-byte word and three single bytes.
        assertEquals(0xFBCEA83C8A378BF1L, xxh("Nobody inspects the spammish repetition"));
    }

    @Test
    void oneShardTakesEverythingAndNamesSpreadOverMany() {
        assertEquals(0, ShardHash.shardOf("anything", 1));
        Map<Integer, Integer> counts = new HashMap<>();
        for (int i = 0; i < 6_000; i++) {
            int shard = ShardHash.shardOf("topic-" + i, 6);
            assertTrue(shard >= 0 && shard < 6);
            counts.merge(shard, 1, Integer::sum);
        }
        assertEquals(6, counts.size());
        counts.values().forEach(c -> assertTrue(c > 800 && c < 1200, "even spread: " + counts));
    }
}
