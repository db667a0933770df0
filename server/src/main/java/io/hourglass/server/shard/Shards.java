package io.hourglass.server.shard;

import io.hourglass.client.ShardHash;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.delivery.DeliveryEngine;
import io.hourglass.core.rooms.RoomEngine;
import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.RaftNode;
import java.util.List;

/**
 * A node's event shards and where a topic goes: shard {@code xxHash64(topic) % count}
 * ({@link ShardHash}). Every node holds a replica of every shard — its store, Raft replica and
 * delivery engine (which works only while this node leads the shard) — so any node can read any
 * shard's replicated state and propose to any shard (a follower forwards to the shard's leader).
 * A room belongs to its shard the same way. What belongs to no topic or room — the peer registry
 * and the security state — lives in the metadata group ({@link io.hourglass.raft.RaftHost#metadata()}),
 * or in shard 0 in a cluster created before it.
 */
public final class Shards {
    /**
     * One shard's parts on this node.
     *
     * @param publisher where the shard's publishes go (the group-commit coalescer in front of {@code raft})
     * @param rooms the shard's rooms (those whose name hashes to it)
     */
    public record Shard(int index, EventStore store, RaftNode raft, Replicator publisher, DeliveryEngine engine,
                        RoomEngine rooms) {
    }

    private final List<Shard> shards;

    public Shards(List<Shard> shards) {
        if (shards.isEmpty()) {
            throw new IllegalArgumentException("no shards");
        }
        this.shards = List.copyOf(shards);
    }

    /** The shard that holds {@code topic}. */
    public Shard of(String topic) {
        return shards.get(ShardHash.shardOf(topic, shards.size()));
    }

    public Shard get(int index) {
        return shards.get(index);
    }

    /** Shard 0: the one whose leader cluster status names and transfer-leader moves. */
    public Shard first() {
        return shards.get(0);
    }

    /** Every shard, in index order. */
    public List<Shard> all() {
        return shards;
    }

    public int count() {
        return shards.size();
    }
}
