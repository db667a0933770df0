package io.hourglass.raft;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.statemachine.StateMachine;

/**
 * The Raft groups of one node's {@link RaftHost} and their replicas: one per event shard
 * ({@code hourglass-events-0} to {@code hourglass-events-(N-1)}) and, in a cluster created with one,
 * the metadata group ({@code hourglass-metadata}, index {@link #META}) that holds what belongs to no
 * topic or room: the peer registry and the security state. A cluster created before the metadata
 * group keeps that state in shard 0, which then is its {@linkplain #metadata() metadata replica}.
 */
final class GroupSlots {
    /** The index of the metadata group where a shard index is asked for (wire messages, logs). */
    static final int META = -1;
    /** How long Ratis' recovery of a group waits for the group's replica to be made. */
    private static final long REGISTRY_WAIT_SECONDS = 60;

    private final String nodeId;
    private final boolean withMeta;
    private final RaftNode[] shards;
    private volatile RaftNode meta;
    /** Each group's replica once made, for the state machine registry: the metadata group's first. */
    private final List<CompletableFuture<RaftNode>> registered = new ArrayList<>();

    GroupSlots(String nodeId, int shards, boolean withMeta) {
        this.nodeId = nodeId;
        this.withMeta = withMeta;
        this.shards = new RaftNode[shards];
        for (int i = 0; i <= shards; i++) {
            registered.add(new CompletableFuture<>());
        }
    }

    /** The Raft group of event shard {@code shard}, or of the metadata group for {@link #META}. */
    static RaftGroupId groupId(int shard) {
        String name = shard == META ? "hourglass-metadata" : "hourglass-events-" + shard;
        return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * Where group {@code shard} keeps a directory that shard 0 keeps at {@code dir}: {@code dir} itself
     * for shard 0 (so a node from before shards finds its files), {@code dir-<shard>} for the other
     * shards, {@code dir-meta} for the metadata group.
     */
    static Path dir(Path dir, int shard) {
        return shard == 0 ? dir : dir.resolveSibling(dir.getFileName() + "-" + (shard == META ? "meta" : shard));
    }

    /** How logs name group {@code shard}. */
    static String name(int shard) {
        return shard == META ? "the metadata group" : "shard " + shard;
    }

    int shardCount() {
        return shards.length;
    }

    boolean withMeta() {
        return withMeta;
    }

    synchronized void register(int shard, RaftNode replica) {
        boolean free = shard == META ? withMeta && meta == null : shard >= 0 && shard < shards.length && shards[shard] == null;
        if (!free) {
            throw new IllegalArgumentException(name(shard) + " is not free on " + nodeId + " (" + shards.length
                    + " shards" + (withMeta ? " and a metadata group" : "") + ")");
        }
        if (shard == META) {
            meta = replica;
        } else {
            shards[shard] = replica;
        }
        registered.get(shard + 1).complete(replica);
    }

    /** Fails when a group has no replica yet. */
    void requireAll() {
        if (withMeta && meta == null) {
            throw new IllegalStateException("the metadata group has no replica; addMetadata before start");
        }
        for (int i = 0; i < shards.length; i++) {
            if (shards[i] == null) {
                throw new IllegalStateException("shard " + i + " has no replica; addShard every shard before start");
            }
        }
    }

    /** The replica of event shard {@code shard}. */
    RaftNode shard(int shard) {
        return shards[shard];
    }

    /** The replica of group {@code shard} ({@link #META} or an event shard), or null when there is none. */
    RaftNode byIndex(int shard) {
        if (shard == META) {
            return meta;
        }
        return shard >= 0 && shard < shards.length ? shards[shard] : null;
    }

    /** The replica that holds the peer registry and security state: the metadata group's, else shard 0's. */
    RaftNode metadata() {
        return withMeta ? meta : shards[0];
    }

    /** Every event shard's replica, shard 0 first. */
    List<RaftNode> shards() {
        return List.of(shards);
    }

    /** Every replica made so far, the metadata group's first (it names the members), then the shards'. */
    List<RaftNode> all() {
        List<RaftNode> all = new ArrayList<>(shards.length + 1);
        if (meta != null) {
            all.add(meta);
        }
        for (RaftNode r : shards) {
            if (r != null) {
                all.add(r);
            }
        }
        return all;
    }

    /** The group ids this node holds a replica of (or will), the metadata group's first. */
    List<RaftGroupId> groupIds() {
        List<RaftGroupId> ids = new ArrayList<>();
        if (withMeta) {
            ids.add(groupId(META));
        }
        for (int i = 0; i < shards.length; i++) {
            ids.add(groupId(i));
        }
        return ids;
    }

    /**
     * The registry Ratis asks for a group's state machine; it may ask while the server is being built,
     * before the replicas exist (it recovers the groups on disk on a thread of its own), so a known
     * group's answer waits for that group's replica.
     */
    StateMachine stateMachineOf(RaftGroupId id) {
        for (int i = withMeta ? META : 0; i < shards.length; i++) {
            if (groupId(i).equals(id)) {
                try {
                    return registered.get(i + 1).get(REGISTRY_WAIT_SECONDS, TimeUnit.SECONDS).stateMachine();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(nodeId + ": interrupted waiting for " + name(i), e);
                } catch (ExecutionException | TimeoutException e) {
                    throw new IllegalStateException(nodeId + ": " + name(i) + " has no replica", e);
                }
            }
        }
        throw new IllegalStateException(nodeId + " has no replica for Raft group " + id + " (it runs " + shards.length
                + " shards" + (withMeta ? " and a metadata group" : ", without a metadata group")
                + ": cluster.shards must be the same on every node, and a cluster created before the metadata group "
                + "needs cluster.metadataGroup=false on the nodes it adds)");
    }

    /** Closing: a registry call still waiting fails at once. */
    void closeRegistry() {
        for (CompletableFuture<RaftNode> f : registered) {
            f.completeExceptionally(new IllegalStateException(nodeId + " is closing"));
        }
    }
}
