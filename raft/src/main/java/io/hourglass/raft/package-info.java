/**
 * Consensus: {@link io.hourglass.raft.RaftHost}, the node's one Ratis server with a group per event
 * shard, and {@link io.hourglass.raft.RaftNode}, one shard's replica: its proposing side and the Ratis
 * state machine that applies Hourglass commands to the shard's store.
 *
 * <pre>
 *  RaftHost ─┬─ RaftServer              one per node; a division (group) per shard; state machines by registry
 *            ├─ PeerTransport           the Raft port: TLS, checkpoint / clock / log-end services (by shard)
 *            ├─ ClockWatch, FailStop    the node's clock check; a store failure stops the Raft server once
 *            ├─ leader balancer         hands each shard to its preferred node (shard i: voter i mod n)
 *            └─ RaftNode per shard
 *  RaftNode ─┬─ HourglassStateMachine   applies entries; the DB is the snapshot; checkpoints
 *            ├─ Proposer                own division while leading, else the Raft client;
 *            │                          timings to a ProposalObserver
 *            ├─ LeadershipNotifier      Ratis callbacks ─▶ LeadershipTracker ─▶ Leadership
 *            │                          changes, one thread, in epoch order, to listeners
 *            ├─ DiskGuard               the log check before Ratis opens it, the free-space watch
 *            │                          (policy: io.hourglass.raft.disk)
 *            ├─ Membership              voters, add/remove, leadership transfer (the host: every shard)
 *            ├─ GroupView               status, lease, readiness (read from Ratis)
 *            └─ FollowerWatch           followers that stopped catching up
 * </pre>
 *
 * Ratis' shaded types stay inside this package.
 */
package io.hourglass.raft;
