package io.hourglass.core.rooms;

import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.XxHash64;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The 20-byte key of a pending room message: {@code xxhash64(room) · priority · sequence}, big-endian,
 * with the priority's sign bit flipped so that RocksDB's unsigned byte order is the signed order.
 * Within a room, keys sort in release order: ascending priority, then enqueue sequence (strict FIFO;
 * two identical payloads are two keys). The sequence is {@code logIndex * 65536 + position in the
 * entry}, identical on every replica. The key's hex form is the message id clients acknowledge.
 */
public record RoomKey(long roomHash, int priority, long sequence) implements Comparable<RoomKey> {
    public static final int LENGTH = 20;
    /** Length of a room's settings entry key: the room hash alone. */
    static final int ROOM_ENTRY_LENGTH = 8;
    private static final HexFormat HEX = HexFormat.of();

    public RoomKey {
        if (sequence < 0) {
            throw new IllegalArgumentException("sequence must not be negative: " + sequence);
        }
    }

    public static RoomKey of(String room, int priority, long logIndex, int position) {
        if (position < 0 || position >= EventKey.MAX_MESSAGES_PER_ENTRY) {
            throw new IllegalArgumentException("position out of range: " + position);
        }
        return new RoomKey(roomHash(room), priority, logIndex * EventKey.MAX_MESSAGES_PER_ENTRY + position);
    }

    public static long roomHash(String room) {
        return XxHash64.hash(room.getBytes(StandardCharsets.UTF_8));
    }

    /** The key of a room's settings entry. */
    static byte[] roomEntryKey(long roomHash) {
        return ByteBuffer.allocate(ROOM_ENTRY_LENGTH).putLong(roomHash).array();
    }

    public static RoomKey fromBytes(byte[] bytes) {
        if (bytes == null || bytes.length != LENGTH) {
            throw new IllegalArgumentException("a room message key has " + LENGTH + " bytes, got "
                    + (bytes == null ? "none" : bytes.length));
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        return new RoomKey(b.getLong(), b.getInt() ^ Integer.MIN_VALUE, b.getLong());
    }

    /** Parses a message id; empty when {@code id} is not one (malformed, or out-of-band). */
    public static Optional<RoomKey> fromId(String id) {
        if (id == null || id.length() != 2 * LENGTH) {
            return Optional.empty();
        }
        try {
            return Optional.of(fromBytes(HEX.parseHex(id)));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    public byte[] toBytes() {
        return ByteBuffer.allocate(LENGTH).putLong(roomHash).putInt(priority ^ Integer.MIN_VALUE).putLong(sequence)
                .array();
    }

    /** The message id: 40 lower-case hex digits. Opaque to clients. */
    public String id() {
        return HEX.formatHex(toBytes());
    }

    @Override
    public int compareTo(RoomKey o) {
        int c = Long.compareUnsigned(roomHash, o.roomHash);
        if (c != 0) {
            return c;
        }
        c = Integer.compare(priority, o.priority);
        return c != 0 ? c : Long.compare(sequence, o.sequence);
    }

    @Override
    public String toString() {
        return id();
    }
}
