/**
 * Cluster tests: several real nodes (Ratis over loopback, RocksDB, gRPC) in one JVM, driven
 * through {@link io.hourglass.client.HourglassClient}, with nodes stopped, wiped and restarted.
 *
 * <pre>
 *   test ──HourglassClient──▶ gRPC of any node ──▶ leader: Raft log ──▶ every node's store
 *     ▲                                               │
 *     └──────── DeliveryLog ◀── deliveries ◀──────────┘ (dispatcher on the leader)
 * </pre>
 *
 * <p>What they show (issue #3): every published message is delivered at least once across a
 * leader failure, and never again to a group after its confirmed ACK ({@link LeaderFailoverTest});
 * five nodes serve with two down and refuse clearly, without hanging, with three down
 * ({@link QuorumLossTest}); consumers follow a transferred leadership on their own
 * ({@link LeadershipTransferTest}); a wiped follower catches up through a snapshot
 * ({@link SnapshotCatchUpTest}); a restarted node rejoins from its own data
 * ({@link RestartRejoinTest}); the Raft log stays bounded under load ({@link RaftLogCompactionTest}).
 *
 * <p>Each test owns its cluster and clients through {@link ClusterResources}, which closes them
 * after the test and prints every node's state when it fails. Every wait is bounded (Awaitility)
 * and every class has a {@code @Timeout}; bounds are generous for a busy two-core machine.
 */
package io.hourglass.server.cluster;
