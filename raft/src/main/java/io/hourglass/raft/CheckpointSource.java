package io.hourglass.raft;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;

/**
 * Where a follower that fell too far behind gets the leader's state: a RocksDB checkpoint,
 * downloaded into a fresh directory. Implemented by the server over its node-to-node gRPC API.
 */
@FunctionalInterface
public interface CheckpointSource {
    /** Downloads a checkpoint of {@code leaderPeerId}'s store; completes with the new directory. */
    CompletableFuture<Path> fetchFrom(String leaderPeerId);
}
