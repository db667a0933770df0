/**
 * The replicated command model: what a log entry holds and how it changes the store
 * ({@link io.hourglass.core.command.StateApplier}), and the {@link io.hourglass.core.command.Replicator}
 * seam through which the core proposes commands without knowing Raft.
 */
package io.hourglass.core.command;
