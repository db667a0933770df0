package io.hourglass.server.grpc;

import io.hourglass.client.ShardHash;
import io.hourglass.core.rooms.RoomEngine;
import java.util.List;
import java.util.function.IntFunction;

/**
 * A node's room engines, one per event shard: a room belongs to shard {@code xxHash64(room) % count}
 * ({@link ShardHash}), and only that shard's leader runs its gate, members and sessions.
 */
public final class RoomEngines {
    private final List<RoomEngine> engines;
    private final IntFunction<String> leaderHint;

    /**
     * @param engines by shard index
     * @param leaderHint a shard's leader's client address, or null when it is unknown or this node
     */
    public RoomEngines(List<RoomEngine> engines, IntFunction<String> leaderHint) {
        if (engines.isEmpty()) {
            throw new IllegalArgumentException("no room engines");
        }
        this.engines = List.copyOf(engines);
        this.leaderHint = leaderHint;
    }

    public int count() {
        return engines.size();
    }

    public RoomEngine engine(int shard) {
        return engines.get(shard);
    }

    public List<RoomEngine> all() {
        return engines;
    }

    /** The shard of {@code room}; 0 when there is one. */
    public int shardOf(String room) {
        return engines.size() == 1 ? 0 : ShardHash.shardOf(room, engines.size());
    }

    /** Where shard {@code shard}'s leader takes calls: its client address, or null (unknown, or this node). */
    public String leaderHint(int shard) {
        return leaderHint.apply(shard);
    }
}
