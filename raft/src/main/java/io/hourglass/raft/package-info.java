/**
 * Consensus: {@link io.hourglass.raft.RaftNode}, the node's Ratis server and proposing client,
 * and the Ratis state machine that applies Hourglass commands to the node's store.
 *
 * <pre>
 *  RaftNode ─┬─ HourglassStateMachine   applies entries; the DB is the snapshot; checkpoints
 *            ├─ Proposer                own division while leading, else the Raft client;
 *            │                          timings to a ProposalObserver
 *            ├─ LeadershipNotifier      Ratis callbacks ─▶ LeadershipTracker ─▶ Leadership
 *            │                          changes, one thread, in epoch order, to listeners
 *            ├─ FailStop                a store failure stops the Raft server once
 *            ├─ DiskGuard               the log check before Ratis opens it, the free-space watch
 *            │                          (policy: io.hourglass.raft.disk)
 *            ├─ Membership              voters, add/remove, leadership transfer
 *            ├─ GroupView               status, lease, readiness (read from Ratis)
 *            └─ FollowerWatch           followers that stopped catching up
 * </pre>
 *
 * Ratis' shaded types stay inside this package.
 */
package io.hourglass.raft;
