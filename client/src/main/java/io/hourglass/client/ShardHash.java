package io.hourglass.client;

import java.nio.charset.StandardCharsets;

/**
 * Which event shard a topic or room belongs to: {@code xxHash64(UTF-8 name, seed 0)} modulo the
 * shard count, read as unsigned. Servers and clients compute it the same way, so a client that
 * knows the shard count and each shard's leader sends a request straight to the node that orders
 * it. XXH64 is written here from its published specification (fast, well-mixed, with fixed test
 * vectors any language can check against).
 */
public final class ShardHash {
    private static final long P1 = 0x9E3779B185EBCA87L;
    private static final long P2 = 0xC2B2AE3D27D4EB4FL;
    private static final long P3 = 0x165667B19E3779F9L;
    private static final long P4 = 0x85EBCA77C2B2AE63L;
    private static final long P5 = 0x27D4EB2F165667C5L;

    private ShardHash() {
    }

    /** The shard of {@code name} among {@code shards} (0 when there is one). */
    public static int shardOf(String name, int shards) {
        if (shards <= 1) {
            return 0;
        }
        return (int) Long.remainderUnsigned(xxHash64(name.getBytes(StandardCharsets.UTF_8)), shards);
    }

    /** XXH64 of {@code input} with seed 0. */
    public static long xxHash64(byte[] input) {
        int len = input.length;
        int p = 0;
        long h;
        if (len >= 32) {
            long v1 = P1 + P2;
            long v2 = P2;
            long v3 = 0;
            long v4 = -P1;
            int limit = len - 32;
            do {
                v1 = round(v1, le64(input, p));
                v2 = round(v2, le64(input, p + 8));
                v3 = round(v3, le64(input, p + 16));
                v4 = round(v4, le64(input, p + 24));
                p += 32;
            } while (p <= limit);
            h = Long.rotateLeft(v1, 1) + Long.rotateLeft(v2, 7) + Long.rotateLeft(v3, 12) + Long.rotateLeft(v4, 18);
            h = merge(h, v1);
            h = merge(h, v2);
            h = merge(h, v3);
            h = merge(h, v4);
        } else {
            h = P5;
        }
        h += len;
        while (p + 8 <= len) {
            h ^= round(0, le64(input, p));
            h = Long.rotateLeft(h, 27) * P1 + P4;
            p += 8;
        }
        if (p + 4 <= len) {
            h ^= (le32(input, p) & 0xFFFFFFFFL) * P1;
            h = Long.rotateLeft(h, 23) * P2 + P3;
            p += 4;
        }
        while (p < len) {
            h ^= (input[p] & 0xFFL) * P5;
            h = Long.rotateLeft(h, 11) * P1;
            p++;
        }
        h ^= h >>> 33;
        h *= P2;
        h ^= h >>> 29;
        h *= P3;
        h ^= h >>> 32;
        return h;
    }

    private static long round(long acc, long input) {
        acc += input * P2;
        acc = Long.rotateLeft(acc, 31);
        return acc * P1;
    }

    private static long merge(long acc, long v) {
        acc ^= round(0, v);
        return acc * P1 + P4;
    }

    private static long le64(byte[] b, int i) {
        return (b[i] & 0xFFL) | (b[i + 1] & 0xFFL) << 8 | (b[i + 2] & 0xFFL) << 16 | (b[i + 3] & 0xFFL) << 24
                | (b[i + 4] & 0xFFL) << 32 | (b[i + 5] & 0xFFL) << 40 | (b[i + 6] & 0xFFL) << 48 | (b[i + 7] & 0xFFL) << 56;
    }

    private static int le32(byte[] b, int i) {
        return (b[i] & 0xFF) | (b[i + 1] & 0xFF) << 8 | (b[i + 2] & 0xFF) << 16 | (b[i + 3] & 0xFF) << 24;
    }
}
