/**
 * The apply seam: what a log entry holds and how it changes the store. Everything a replica
 * applies goes through the {@link io.hourglass.core.command.StateApplier}, which routes each command
 * by its kind to the {@link io.hourglass.core.command.CommandApplier} that owns it and tells the
 * {@link io.hourglass.core.command.ApplyListener}s what changed ({@link io.hourglass.core.command.ApplyResult}).
 *
 * <pre>
 *  Raft apply thread ──▶ StateApplier ──┬─▶ QueueApplier   (put, delete batch, groups, purge, delete message)
 *                          │  commit    ├─▶ PeerApplier    (register peer)
 *                          ▼            └─▶ RoomApplier    (rooms; registered by the node, lives in …rooms)
 *                     ApplyListeners (delivery, rooms)
 * </pre>
 *
 * The queue's commands are built here too ({@link io.hourglass.core.command.QueueCommands}), and
 * the core proposes through the {@link io.hourglass.core.command.Replicator} seam without knowing
 * Raft. This package names no domain above it: rooms and delivery depend on it, never the reverse
 * (checked by {@code LayeringTest}).
 */
package io.hourglass.core.command;
