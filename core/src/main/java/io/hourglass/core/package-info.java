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
 */
package io.hourglass.core;
