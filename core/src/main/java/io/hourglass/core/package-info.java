/**
 * Hourglass core: everything a node does that is neither consensus nor network.
 *
 * <pre>
 *  Put ──▶ (Replicator) ──▶ StateApplier ──▶ EventStore (RocksDB)
 *                                 │ ApplyListener
 *                                 ▼
 *  EventStore ──range scan──▶ Dispatcher ──▶ Hub ──▶ consumer buffers
 *       ▲                        │  ▲
 *       └── DeleteBatchCmd ◀── Deleter ◀── acks / expirations (TtlJanitor)
 * </pre>
 *
 * No Ratis and no gRPC here: replication is reached through {@link io.hourglass.core.command.Replicator}.
 * Package dependencies run one way — {@code storage} ← {@code command} (the apply seam) ←
 * {@code rooms}, {@code delivery}, with neither domain knowing the other — and the build checks
 * it ({@code LayeringTest}).
 */
package io.hourglass.core;
