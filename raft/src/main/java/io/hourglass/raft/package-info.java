/**
 * Consensus: the Ratis state machine that applies Hourglass commands to the node's store, and
 * {@link io.hourglass.raft.RaftNode}, the node's Ratis server and proposing client. Ratis'
 * shaded types stay inside this package.
 */
package io.hourglass.raft;
