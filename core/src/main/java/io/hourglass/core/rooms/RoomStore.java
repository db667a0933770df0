package io.hourglass.core.rooms;

import com.google.protobuf.InvalidProtocolBufferException;
import io.hourglass.core.proto.RoomMessage;
import io.hourglass.core.proto.StoredRoom;
import io.hourglass.core.proto.StoredRooms;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.StorageException;
import io.hourglass.core.storage.StoreBatch;
import io.hourglass.core.storage.TermIndex;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rooms' view of the {@code rooms} column family: key layout ({@link RoomKey}) and value codecs.
 * Reads from any thread; writes only into the apply thread's {@link StoreBatch}.
 */
final class RoomStore {
    private static final Logger LOG = LoggerFactory.getLogger(RoomStore.class);
    private final EventStore store;

    RoomStore(EventStore store) {
        this.store = store;
    }

    /** The replicated state of every room that has some, as of one applied position. */
    record Loaded(TermIndex position, Map<String, StoredRoom> rooms, Map<String, List<PendingMessage>> pending) {
    }

    /** A pending message; empty when the key holds none or (a hash collision) another room's. */
    Optional<RoomMessage> message(String room, RoomKey key) {
        return store.roomEntry(key.toBytes()).map(RoomStore::parseMessage).filter(m -> m.getRoom().equals(room));
    }

    /** The room's stored state; the default (at most once, nothing in flight) when it has none. */
    StoredRoom room(String room) {
        for (StoredRoom r : bucket(RoomKey.roomHash(room)).getRoomsList()) {
            if (r.getRoom().equals(room)) {
                return r;
            }
        }
        return StoredRoom.newBuilder().setRoom(room).build();
    }

    void putMessage(StoreBatch batch, RoomKey key, RoomMessage message) {
        batch.putRoomEntry(key.toBytes(), message.toByteArray());
    }

    void deleteMessage(StoreBatch batch, RoomKey key) {
        batch.deleteRoomEntry(key.toBytes());
    }

    /** Stores a room's state; a room back at the defaults with nothing in flight takes no space. */
    void putRoom(StoreBatch batch, StoredRoom room) {
        long hash = RoomKey.roomHash(room.getRoom());
        StoredRooms.Builder b = StoredRooms.newBuilder();
        for (StoredRoom r : bucket(hash).getRoomsList()) {
            if (!r.getRoom().equals(room.getRoom())) {
                b.addRooms(r);
            }
        }
        if (!room.equals(StoredRoom.newBuilder().setRoom(room.getRoom()).build())) {
            b.addRooms(room);
        }
        byte[] key = RoomKey.roomEntryKey(hash);
        if (b.getRoomsCount() == 0) {
            batch.deleteRoomEntry(key);
        } else {
            batch.putRoomEntry(key, b.build().toByteArray());
        }
    }

    /**
     * The key of the last {@code RoomFenceCmd} applied: 5 bytes, a length no room entry (8) or
     * message (20) key has. Its value: the fence's leader term and incarnation, 8 bytes each.
     */
    private static final byte[] FENCE_KEY = {'f', 'e', 'n', 'c', 'e'};

    /** The last fence applied, as {term, incarnation}; {0, 0} before any. */
    long[] fence() {
        return store.roomEntry(FENCE_KEY).map(v -> {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(v);
            return new long[] {b.getLong(), b.getLong()};
        }).orElse(new long[] {0, 0});
    }

    void putFence(StoreBatch batch, long term, long incarnation) {
        batch.putRoomEntry(FENCE_KEY, java.nio.ByteBuffer.allocate(16).putLong(term).putLong(incarnation).array());
    }

    /** Reads every room's state and pending messages from one snapshot (a new leader's start). */
    Loaded loadAll() {
        Map<String, StoredRoom> rooms = new HashMap<>();
        Map<String, List<PendingMessage>> pending = new HashMap<>();
        TermIndex at = store.scanRoomEntries((k, v) -> {
            if (k.length == RoomKey.ROOM_ENTRY_LENGTH) {
                for (StoredRoom r : parseBucket(v).getRoomsList()) {
                    rooms.put(r.getRoom(), r);
                }
            } else if (k.length == RoomKey.LENGTH) {
                RoomKey key = RoomKey.fromBytes(k);
                RoomMessage m = parseMessage(v);
                if (RoomKey.roomHash(m.getRoom()) == key.roomHash()) {
                    pending.computeIfAbsent(m.getRoom(), r -> new ArrayList<>()).add(PendingMessage.of(key, m));
                } else {
                    LOG.warn("room message {} names room '{}' whose hash differs; skipped", key, m.getRoom());
                }
            } else if (!java.util.Arrays.equals(k, FENCE_KEY)) {
                LOG.warn("unexpected {}-byte key in the rooms column family; skipped", k.length);
            }
            return true;
        });
        return new Loaded(at, rooms, pending);
    }

    private StoredRooms bucket(long hash) {
        return store.roomEntry(RoomKey.roomEntryKey(hash)).map(RoomStore::parseBucket)
                .orElse(StoredRooms.getDefaultInstance());
    }

    private static RoomMessage parseMessage(byte[] v) {
        try {
            return RoomMessage.parseFrom(v);
        } catch (InvalidProtocolBufferException e) {
            throw new StorageException("corrupt room message: " + e.getMessage(), e);
        }
    }

    private static StoredRooms parseBucket(byte[] v) {
        try {
            return StoredRooms.parseFrom(v);
        } catch (InvalidProtocolBufferException e) {
            throw new StorageException("corrupt room entry: " + e.getMessage(), e);
        }
    }
}
