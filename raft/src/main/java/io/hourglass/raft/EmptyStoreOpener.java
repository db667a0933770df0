package io.hourglass.raft;

import io.hourglass.core.command.ClusterCommands;
import io.hourglass.core.command.QueueCommands;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.proto.Command;
import io.hourglass.core.storage.EventStore;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A leader of a shard whose store has applied nothing yet (no topic of it was used) proposes one
 * command that changes nothing (an empty delete batch), so that the store sits at a real index on
 * every replica. Ratis tells every joining node to install a checkpoint; one of a store at no index
 * reported "installed at -1", and the node was then never sent the log (seen in a chaos run with
 * four shards, on the shard no topic used). The metadata group's first leader records the shard
 * count instead, which opens its store the same way. A failed proposal (a contact guard still
 * counting the voters right after the start refuses it) is tried again every {@link #RETRY_MS}
 * while this node leads: a shard whose store stayed at no index left a node added later unable to
 * catch up on it (CI: the joiner's setConfiguration never completed).
 */
final class EmptyStoreOpener {
    private static final Logger LOG = LoggerFactory.getLogger(EmptyStoreOpener.class);
    /** How long a failed first command of an empty store waits before it is proposed again. */
    private static final long RETRY_MS = 500;

    private final String nodeId;
    private final int shard;
    private final EventStore store;
    private final Replicator replicator;
    private final BooleanSupplier leading;
    private final BooleanSupplier closing;
    private final int shardCount;

    EmptyStoreOpener(String nodeId, int shard, EventStore store, Replicator replicator, BooleanSupplier leading,
                     BooleanSupplier closing, int shardCount) {
        this.nodeId = nodeId;
        this.shard = shard;
        this.store = store;
        this.replicator = replicator;
        this.leading = leading;
        this.closing = closing;
        this.shardCount = shardCount;
    }

    void onLeadership(Leadership change) {
        if (!change.leading() || !leading.getAsBoolean() || closing.getAsBoolean()) {
            return;
        }
        boolean meta = shard == GroupSlots.META;
        if (meta ? store.clusterShards().isPresent() : store.appliedIndex().index() >= 0) {
            return;
        }
        Command first = meta ? ClusterCommands.layout(shardCount) : QueueCommands.deleteBatch(List.of());
        replicator.propose(first).whenComplete((r, e) -> {
            if (e == null && !r.getRefused().isEmpty()) {
                LOG.warn("{}: the metadata group refused this node's shard count: {}", nodeId, r.getRefused());
            } else if (e != null) {
                LOG.debug("{}: {}: opening an empty store failed, trying again: {}", nodeId, GroupSlots.name(shard),
                        e.toString());
                CompletableFuture.delayedExecutor(RETRY_MS, TimeUnit.MILLISECONDS).execute(() -> onLeadership(change));
            }
        });
    }
}
