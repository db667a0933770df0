package io.hourglass.core.storage;

import com.google.protobuf.ByteString;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * The 24-byte key of a scheduled message: {@code xxhash64(topic) · dueAtMs · sequence}, all
 * big-endian. RocksDB compares keys as unsigned bytes, so entries sort by topic hash, then due
 * time, then sequence, and "everything of topic T due by now" is the single range
 * {@code [scanStart(T), scanEnd(T, now))}. The key doubles as the consumer's delivery tag.
 *
 * <p>The sequence is {@code logIndex * 65536 + position in the entry}, identical on every replica.
 */
public record EventKey(long topicHash, long dueAtMs, long sequence) implements Comparable<EventKey> {
    public static final int LENGTH = 24;
    /** Messages one log entry may carry: the position fills the sequence's low 16 bits. */
    public static final int MAX_MESSAGES_PER_ENTRY = 1 << 16;

    public EventKey {
        if (dueAtMs < 0) {
            throw new IllegalArgumentException("due time must not be negative: " + dueAtMs);
        }
        if (sequence < 0) {
            throw new IllegalArgumentException("sequence must not be negative: " + sequence);
        }
    }

    public static EventKey of(String topic, long dueAtMs, long logIndex, int position) {
        return ofHash(topicHash(topic), dueAtMs, logIndex, position);
    }

    /** {@link #of(String, long, long, int)} for a topic whose {@link #topicHash} is known. */
    public static EventKey ofHash(long topicHash, long dueAtMs, long logIndex, int position) {
        if (position < 0 || position >= MAX_MESSAGES_PER_ENTRY) {
            throw new IllegalArgumentException("position out of range: " + position);
        }
        return new EventKey(topicHash, dueAtMs, logIndex * MAX_MESSAGES_PER_ENTRY + position);
    }

    /** {@link #topicHash(String)} of a name as its UTF-8 bytes, as a log entry carries it (no decoding). */
    public static long topicHash(ByteString topicUtf8) {
        return XxHash64.hash(topicUtf8.toByteArray());
    }

    public static long topicHash(String topic) {
        return XxHash64.hash(topic.getBytes(StandardCharsets.UTF_8));
    }

    public static EventKey fromBytes(byte[] bytes) {
        if (bytes == null || bytes.length != LENGTH) {
            throw new IllegalArgumentException("an event key has " + LENGTH + " bytes, got "
                    + (bytes == null ? "none" : bytes.length));
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        return new EventKey(b.getLong(), b.getLong(), b.getLong());
    }

    /** Parses the hex form that {@link #toHex()} writes (the message id users see). */
    public static EventKey fromHex(String hex) {
        try {
            return fromBytes(HexFormat.of().parseHex(hex));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a message id: '" + hex + "'", e);
        }
    }

    public byte[] toBytes() {
        return ByteBuffer.allocate(LENGTH).putLong(topicHash).putLong(dueAtMs).putLong(sequence).array();
    }

    public String toHex() {
        return HexFormat.of().formatHex(toBytes());
    }

    /** Inclusive lower bound of every key of a topic. */
    public static byte[] scanStart(long topicHash) {
        return ByteBuffer.allocate(LENGTH).putLong(topicHash).putLong(0).putLong(0).array();
    }

    /** Exclusive upper bound of the keys of a topic that are due at {@code nowMs}. */
    public static byte[] scanEnd(long topicHash, long nowMs) {
        return ByteBuffer.allocate(LENGTH).putLong(topicHash).putLong(nowMs + 1).putLong(0).array();
    }

    @Override
    public int compareTo(EventKey o) {
        int c = Long.compareUnsigned(topicHash, o.topicHash);
        if (c != 0) {
            return c;
        }
        c = Long.compare(dueAtMs, o.dueAtMs);
        return c != 0 ? c : Long.compare(sequence, o.sequence);
    }

    /**
     * Written out, not the record's generated one: an event key is the key of the leader's
     * in-flight, hub and deleter maps, hashed several times per delivery, and the generated method
     * (an invokedynamic bootstrap) showed up as 9 % of the delivery thread.
     */
    @Override
    public int hashCode() {
        long h = topicHash * 0x9E3779B97F4A7C15L + dueAtMs;
        h = h * 0x9E3779B97F4A7C15L + sequence;
        return (int) (h ^ (h >>> 32));
    }

    @Override
    public boolean equals(Object o) {
        return this == o || o instanceof EventKey k && k.sequence == sequence && k.dueAtMs == dueAtMs
                && k.topicHash == topicHash;
    }

    @Override
    public String toString() {
        return toHex();
    }
}
