package io.hourglass.core.command;

import io.hourglass.core.proto.ClusterLayoutCmd;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.RegisterPeerCmd;

/** The metadata group's commands about the cluster itself, applied by {@link PeerApplier}. */
public final class ClusterCommands {
    private ClusterCommands() {
    }

    /** Records the cluster's shard count; refused when another count is recorded. */
    public static Command layout(int shards) {
        return Command.newBuilder().setClusterLayout(ClusterLayoutCmd.newBuilder().setShards(shards)).build();
    }

    /** Registers a member's client (gRPC) address. */
    public static Command registerPeer(String id, String grpcAddress) {
        return Command.newBuilder().setRegisterPeer(RegisterPeerCmd.newBuilder().setId(id).setGrpcAddress(grpcAddress))
                .build();
    }
}
