package io.hourglass.core.command;

import io.hourglass.core.proto.ClusterLayoutCmd;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.RegisterPeerCmd;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.StoreBatch;
import io.hourglass.core.storage.TermIndex;
import java.util.EnumSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Applies the cluster's own records, which the metadata group holds: {@link RegisterPeerCmd}, a
 * member's client address (Ratis' configuration does not carry it), and {@link ClusterLayoutCmd},
 * the shard count, recorded once (a record of another count is refused and changes nothing).
 */
final class PeerApplier implements CommandApplier {
    private final EventStore store;

    PeerApplier(EventStore store) {
        this.store = store;
    }

    @Override
    public Set<Command.BodyCase> kinds() {
        return EnumSet.of(Command.BodyCase.REGISTER_PEER, Command.BodyCase.CLUSTER_LAYOUT);
    }

    @Override
    public ApplyResult apply(StoreBatch batch, Command command, long stampMs, TermIndex position) {
        if (command.hasClusterLayout()) {
            int shards = command.getClusterLayout().getShards();
            OptionalInt recorded = store.clusterShards();
            if (recorded.isPresent() && recorded.getAsInt() != shards) {
                String why = "the cluster was created with " + recorded.getAsInt() + " shards, not " + shards;
                return new ApplyResult(position, stampMs, List.of(), false, List.of(), List.of(), List.of(refusal(why)));
            }
            batch.putClusterShards(shards);
            return ApplyResult.unchanged(position, stampMs);
        }
        RegisterPeerCmd peer = command.getRegisterPeer();
        batch.putPeerAddress(peer.getId(), peer.getGrpcAddress());
        return ApplyResult.unchanged(position, stampMs);
    }

    private static ApplyResult.Change refusal(String why) {
        return new ApplyResult.Change() {
            @Override
            public String refusal() {
                return why;
            }
        };
    }
}
