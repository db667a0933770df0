/**
 * Disk faults: what a node does about a damaged Raft log and a full disk. The rule in both: a node
 * never runs on storage it cannot trust — it stops, or does not start, and says why in one line — and
 * the cluster serves on with the others, as it does when any one node is down.
 *
 * <h2>A damaged Raft log: refuse to start, unless a crash tore its tail</h2>
 *
 * <pre>
 *  start ─▶ FreeSpace.requireAtStart ─▶ store opens ─▶ RaftLogCheck ─▶ Ratis opens the log
 *            (short: exit 70)                           │
 *                                                       ├─ closed segment damaged, gap, bad raft-meta,
 *                                                       │  bad entry with data after it ──▶ exit 65
 *                                                       └─ torn tail of the open segment ──▶ cut, WARN
 * </pre>
 *
 * A closed segment is written once, fsynced and renamed; nothing a crash does can change it afterwards.
 * A flipped byte or a cut in one is damage — a bad disk, a bad copy, a human — and so is a gap between
 * segments or a term-and-vote file ({@code raft-meta}) that is empty. Such a node could hold entries the
 * others committed and no longer have them, or have forgotten its vote: were it let to vote, a
 * candidate missing committed entries could win with its help, and were it elected, it would serve
 * wrong data. So {@link io.hourglass.raft.disk.RaftLogCheck} refuses the start with a
 * {@link io.hourglass.raft.disk.CorruptRaftLogException}: one ERROR (and one line on stderr) naming the
 * file, the entry and what is wrong, and {@code hourglass-server} exits with status 65. Ratis 3.2 would
 * refuse most of these too, but with a stack trace that names no file, and not all: a flipped length
 * byte reads like a torn tail to it, and its "gap between logs" then blames the wrong segment.
 *
 * <p>Status 65 means "do not restart me": the shipped systemd unit does not restart on it
 * ({@code RestartPreventExitStatus=65}). The repair is the operator's, and the one a node already
 * survives: delete the node's data directory and start it again; it catches up from the leader (the
 * log, or a checkpoint when the leader has purged it; {@code LostLogWatch} unsticks a leader that
 * remembers the old log). Wipe one node at a time, while the others have a leader: a wiped node has
 * forgotten its vote too. Why not repair from the peers automatically? Dropping the damaged segments
 * would lose entries this node may have acknowledged, the same as a wipe but silently; a disk that
 * flips bits in the Raft log may have damaged the RocksDB files too, which only a wipe replaces; and a
 * node that keeps refusing is visible, where a node that quietly repairs a bad disk is not.
 *
 * <p>The open segment is different: it is being appended to, and a crash (or a kill during a large
 * write) can leave its last entry incomplete — cut off by the end of the file, or failing its checksum
 * with only the preallocated zeros after it. That entry was never acknowledged (Ratis acknowledges an
 * entry once it is flushed), so the check cuts it off with a WARN and the leader sends it again. Ratis
 * 3.2 drops the first kind itself but refuses to start on the second. A bad entry with data after it is
 * not a torn write, and is refused. One more repair keeps Ratis 3.2 from stranding the node: an open
 * segment that now ends before the store's applied index is closed under its real end index, so that
 * Ratis purges it as covered by the snapshot (left open, Ratis starts, then fails every append with
 * "gap between entries" and the node never catches up). Entries the store has applied are never lost:
 * the store is the snapshot.
 *
 * <h2>A full disk: stop, and start again once there is space</h2>
 *
 * When the file system of the data directory has less than {@code node.minFreeDiskMb} free, or a write
 * fails with ENOSPC anyway (the Raft log — {@code notifyLogFailed} — or RocksDB), the node logs one ERROR
 * naming the directory, its free space and the minimum, stops (its clients' calls fail UNAVAILABLE with
 * that reason and go to another server) and {@code hourglass-server} exits with status 70, the status
 * of any storage failure. Started while space is still short, it does not start (status 70 again, one
 * line saying how much is free and needed) before it writes anything; once space is freed, its
 * supervisor's next restart brings it back, and it catches up from the leader.
 *
 * <p>Why stop rather than wait in place for space to return? Neither Ratis nor RocksDB recovers in a
 * running process: after a failed write Ratis' log worker fails every later append ("Log already
 * failed") until the server restarts, RocksDB turns read-only, and Ratis writes its term-and-vote file
 * in a way that leaves it <em>empty</em> when that write fails on a full disk — a node that then
 * restarts has forgotten its vote and is refused above. Stopping while some space is left (the minimum)
 * keeps those files whole; a process restart is the one recovery both libraries support. A leader that
 * stops is replaced at once (its followers see its Raft port close, {@code LeaderExitWatch}).
 */
package io.hourglass.raft.disk;
