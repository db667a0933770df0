package io.hourglass.raft;

import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.storage.EventStore;
import java.io.IOException;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.InvalidProtocolBufferException;
import org.apache.ratis.util.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Ratis state machine of a Hourglass group: applies {@link Command}s to the node's RocksDB
 * through the core's {@link StateApplier}.
 *
 * <p>The DB is the snapshot (RATIS-NOTES.md): the store keeps its applied position in the same
 * write as the data, {@link #getLatestSnapshot()} reports that position with no files, and
 * {@link #takeSnapshot()} syncs RocksDB's write-ahead log (one fsync; waiting for a memtable flush held the apply
 * thread of every node at once for ~0.7 s) and returns it, so a restart replays nothing already
 * applied and the log before it can be purged.
 *
 * <p>Time: the leader stamps {@code stamped_at_ms} in {@link #startTransaction}; apply never reads
 * a clock.
 *
 * <p>Failure: an entry that cannot be applied (malformed, or the store failed), a store flush
 * that fails and a failed Raft log write trip the node's {@link FailStop} once, which stops the server instead of letting the
 * node diverge; from then on every apply fails at once and no snapshot is taken.
 *
 * <p>Leadership: Ratis' callbacks go to the node's {@link LeadershipNotifier}, leader-ready with
 * the term of the entry whose apply made this leader ready.
 */
public final class HourglassStateMachine extends BaseStateMachine {
    private static final Logger LOG = LoggerFactory.getLogger(HourglassStateMachine.class);

    private final StateApplier applier;
    private final Clock clock;
    private final int maxEntryBytes;
    private final LeadershipNotifier leadership;
    private final CheckpointSource checkpoints;
    private final FailStop failStop;
    /**
     * The last configuration entry applied (apply thread). A new leader is ready once it applied
     * its first entry, a configuration entry; Ratis reports it just before leader-ready.
     */
    private volatile TermIndex lastConfiguration;
    /** A downloaded checkpoint that {@link #reinitialize()} swaps in; set by the install, read by Ratis' reload. */
    private volatile Downloaded pendingCheckpoint;
    /** A checkpoint download or install is under way (from the leader's notice to the reload). */
    private volatile boolean installing;
    private volatile long lastStamp;
    private final Supplier<String> stampRefusal;
    private final java.util.function.BooleanSupplier hostRunning;
    private final java.util.concurrent.atomic.AtomicLong snapshotsTaken = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong snapshotsInstalled = new java.util.concurrent.atomic.AtomicLong();

    /**
     * @param stampRefusal why this node may not stamp entries now (its clock is off, see
     *        {@link ClockWatch}), or null
     * @param hostRunning whether the node's Raft server started and is not closing: a close while
     *        it is, is Ratis closing this division on its own
     */
    HourglassStateMachine(StateApplier applier, Clock clock, int maxEntryBytes, LeadershipNotifier leadership,
                          CheckpointSource checkpoints, FailStop failStop, Supplier<String> stampRefusal,
                          java.util.function.BooleanSupplier hostRunning) {
        this.stampRefusal = stampRefusal;
        this.hostRunning = hostRunning;
        this.checkpoints = checkpoints;
        this.failStop = failStop;
        this.applier = applier;
        this.clock = clock;
        this.maxEntryBytes = maxEntryBytes;
        this.leadership = leadership;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage storage) throws IOException {
        super.initialize(server, groupId, storage);
        getLifeCycle().startAndTransition(this::loadAppliedPosition);
    }

    private void loadAppliedPosition() {
        io.hourglass.core.storage.TermIndex applied = applier.store().appliedIndex();
        if (applied.index() >= 0) {
            setLastAppliedTermIndex(TermIndex.valueOf(applied.term(), applied.index()));
        }
        LOG.info("{}: state machine at applied {}", getId(), applied);
    }

    @Override
    public void pause() {
        LifeCycle lc = getLifeCycle();
        if (lc.getCurrentState() == LifeCycle.State.RUNNING) {
            lc.transition(LifeCycle.State.PAUSING);
            lc.transition(LifeCycle.State.PAUSED);
        }
        LOG.info("{}: state machine paused at {}", getId(), getLastAppliedTermIndex());
    }

    @Override
    public void reinitialize() throws IOException {
        LifeCycle lc = getLifeCycle();
        if (lc.getCurrentState() != LifeCycle.State.PAUSED) {
            throw new IllegalStateException("reinitialize in state " + lc.getCurrentState() + ", expected PAUSED");
        }
        lc.transition(LifeCycle.State.STARTING);
        Downloaded pending = pendingCheckpoint;
        java.nio.file.Path checkpoint = pending == null ? null : pending.dir();
        if (checkpoint != null) {
            try {
                applier.store().restoreFrom(checkpoint);
            } catch (RuntimeException e) {
                failStop.trip("installing the checkpoint " + checkpoint, e);
                throw new IOException("cannot install the checkpoint " + checkpoint, e);
            }
            pendingCheckpoint = null;
            snapshotsInstalled.incrementAndGet();
        }
        loadAppliedPosition();
        installing = false;
        lc.transition(LifeCycle.State.RUNNING);
    }

    @Override
    public SnapshotInfo getLatestSnapshot() {
        io.hourglass.core.storage.TermIndex applied = applier.store().appliedIndex();
        return applied.index() < 0 ? null : new DbSnapshot(TermIndex.valueOf(applied.term(), applied.index()));
    }

    /**
     * Flushes the store. After a store failure (or when this one fails) nothing is flushed and no
     * snapshot reported, so Ratis purges no log and, at a stop, goes on closing.
     */
    @Override
    public long takeSnapshot() {
        if (failStop.tripped()) {
            return RaftLog.INVALID_LOG_INDEX;
        }
        long startNanos = System.nanoTime();
        // The applied position is read before the sync: everything up to it is then durable.
        io.hourglass.core.storage.TermIndex applied = applier.store().appliedIndex();
        try {
            applier.store().syncWal();
        } catch (RuntimeException e) {
            failStop.trip("snapshot (store WAL sync)", e);
            return RaftLog.INVALID_LOG_INDEX;
        }
        snapshotsTaken.incrementAndGet();
        LOG.info("{}: snapshot taken at {} in {} ms (the store synced; no files)", getId(), applied,
                (System.nanoTime() - startNanos) / 1_000_000);
        return applied.index();
    }

    /** Checkpoints installed from a leader since this state machine was created. */
    /** A checkpoint download or install is under way. */
    boolean installing() {
        return installing;
    }

    /**
     * The leader whose notice made this node download the checkpoint that waits for Ratis to install
     * it (on that or another leader's next notice), or null.
     */
    String downloadedFrom() {
        Downloaded pending = pendingCheckpoint;
        return pending == null ? null : pending.leader();
    }

    public long snapshotsInstalled() {
        return snapshotsInstalled.get();
    }

    /** Snapshots taken since this state machine was created (tests, metrics). */
    public long snapshotsTaken() {
        return snapshotsTaken.get();
    }

    @Override
    public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
        ByteString content = request.getMessage().getContent();
        if (content.size() > maxEntryBytes) {
            throw new IOException("command of " + content.size() + " bytes exceeds the entry limit of " + maxEntryBytes);
        }
        Command command = parse(content);
        String refusal = stampRefusal.get();
        if (refusal != null) {
            return TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request).build()
                    .setException(new ClockSkewedException(refusal));
        }
        // Leader time, never going backwards: not within this leader even if its wall clock does,
        // nor across leaders, whose clocks differ (up to raft.maxClockSkew): never below the
        // highest stamp applied. Stamps are thus in log order, and so is the state's time.
        long now = Math.max(clock.millis(), Math.max(lastStamp, applier.store().clockMs()));
        lastStamp = now;
        // One codec pass per entry on the leader: the stamp is appended to the request's bytes as a
        // field (protobuf keeps the last value of a scalar field), not re-encoded with the whole
        // command, and the parsed, stamped command rides in the transaction context to apply.
        return TransactionContext.newBuilder()
                .setStateMachine(this)
                .setClientRequest(request)
                .setLogData(content.concat(stampField(now)))
                .setStateMachineContext(command.toBuilder().setStampedAtMs(now).build())
                .build();
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LifeCycle.State state = getLifeCycleState();
        if (state != LifeCycle.State.RUNNING) {
            throw new IllegalStateException("apply while the state machine is " + state);
        }
        LogEntryProto entry = trx.getLogEntry();
        if (failStop.tripped()) {
            return CompletableFuture.failedFuture(new StoreFailedException("entry " + entry.getIndex()
                    + " not applied: the store of this node failed, the node is stopping"));
        }
        try {
            Command command = trx.getStateMachineContext() instanceof Command parsed
                    ? parsed : parse(entry.getStateMachineLogEntry().getLogData());
            var result = applier.apply(command, new io.hourglass.core.storage.TermIndex(entry.getTerm(), entry.getIndex()));
            updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
            return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(result.reply().toByteArray())));
        } catch (IOException | RuntimeException e) {
            failStop.trip("applying entry " + entry.getTerm() + ":" + entry.getIndex(), e);
            return CompletableFuture.failedFuture(new StoreFailedException("entry " + entry.getIndex()
                    + " not applied: " + e.getMessage()));
        }
    }

    /**
     * Ratis' log worker failed to write (a full disk, an I/O error): it stays failed — every later
     * append fails "Log already failed" — until the server restarts, so this node stops (FailStop)
     * instead of running on, unable to log, looking healthy.
     */
    @Override
    public void notifyLogFailed(Throwable cause, LogEntryProto failedEntry) {
        failStop.trip("writing the Raft log" + (failedEntry == null ? "" : " at entry " + failedEntry.getTerm() + ":"
                + failedEntry.getIndex()), cause);
    }

    /**
     * Ratis closes a division on its own when its log worker hits an unexpected exception (seen in
     * 3.3.0 right after a checkpoint install: "lastWrittenIndex == 13392, entry == 13394"). The
     * division is then gone while the process runs on, never ready again, and no supervisor
     * notices. So such a close stops the node (FailStop): it exits, and is restarted on a log that
     * is intact up to the last entry it wrote. A close by this node (shutdown, or a FailStop
     * already under way) is not one. Ratis also closes a division whose group's leader says this
     * node is not in its configuration (an add-node that did not finish, or a removed node that
     * still runs): the node stops the same way, and says so.
     */
    @Override
    public void close() throws IOException {
        if (hostRunning.getAsBoolean() && !failStop.tripped()) {
            // Ratis tells of a shut-down by the leader only once the division's close, which waits
            // for this one, has finished: so the report waits a moment for that notice.
            Thread report = new Thread(() -> {
                boolean evicted = awaitQuietly(toldToShutDown, SHUTDOWN_NOTICE_WAIT_MS);
                if (!hostRunning.getAsBoolean()) {
                    return; // the node is closing anyway
                }
                failStop.trip("the Raft group " + getGroupId() + (evicted
                        ? " (its leader says this node is not in the group's configuration and Ratis closed it:"
                        + " an add-node that did not finish, run it again; or the node was removed)"
                        : " (Ratis closed it while the node was running; its error is logged above)"),
                        new GroupClosedException("Raft group " + getGroupId() + " closed by Ratis"));
            }, "hourglass-group-closed-" + getGroupId());
            report.setDaemon(true);
            report.start();
        }
        super.close();
    }

    /** How long a close by Ratis waits for its shut-down notice ({@link #notifyServerShutdown}) before reporting. */
    static final long SHUTDOWN_NOTICE_WAIT_MS = 1_000;

    private final java.util.concurrent.CountDownLatch toldToShutDown = new java.util.concurrent.CountDownLatch(1);

    /**
     * Ratis shuts a division down when a vote request gets "shut down" from the group's leader (whose
     * committed configuration does not have this node) or finds this node outside its configuration,
     * and tells it here right after closing it ({@code allServer} false: this group only).
     */
    @Override
    public void notifyServerShutdown(org.apache.ratis.proto.RaftProtos.RoleInfoProto roleInfo, boolean allServer) {
        if (!allServer) {
            toldToShutDown.countDown();
        }
    }

    private static boolean awaitQuietly(java.util.concurrent.CountDownLatch latch, long ms) {
        try {
            return latch.await(ms, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** {@code stamped_at_ms} (field 1, varint) encoded on its own, to append to an encoded command. */
    static ByteString stampField(long stampMs) {
        byte[] out = new byte[11];
        out[0] = 0x08; // field 1, wire type 0
        int n = 1;
        long v = stampMs;
        while ((v & ~0x7FL) != 0) {
            out[n++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out[n++] = (byte) v;
        return ByteString.copyFrom(out, 0, n);
    }

    private static Command parse(ByteString bytes) throws IOException {
        try {
            Command c = Command.parseFrom(bytes.asReadOnlyByteBuffer());
            if (c.getBodyCase() == Command.BodyCase.BODY_NOT_SET) {
                throw new IOException("command has no body");
            }
            return c;
        } catch (InvalidProtocolBufferException | com.google.protobuf.InvalidProtocolBufferException e) {
            throw new IOException("malformed command: " + e.getMessage(), e);
        }
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeaderId) {
        leadership.leaderChanged(currentTerm(), newLeaderId.toString());
    }

    @Override
    public void notifyNotLeader(java.util.Collection<TransactionContext> pending) {
        leadership.steppedDown(currentTerm());
    }

    @Override
    public void notifyConfigurationChanged(long term, long index, RaftConfigurationProto configuration) {
        lastConfiguration = TermIndex.valueOf(term, index);
    }

    /**
     * Apply thread, right after the new leader's first entry — a configuration entry of its term —
     * was applied; every entry before it is in the store. That entry counts as applied here
     * already (Ratis records it a moment later), so a listener that asks sees the term applied.
     */
    @Override
    public void notifyLeaderReady() {
        TermIndex first = lastConfiguration;
        if (first == null) {
            leadership.ready(currentTerm()); // cannot happen: Ratis applies the entry first
            return;
        }
        updateLastAppliedTermIndex(first.getTerm(), first.getIndex());
        leadership.ready(first.getTerm());
    }

    /**
     * Ratis' current term, read in its leadership callbacks; -1 when the division is gone. Does not
     * wait: Ratis completes the division before starting it, and it calls back only once started.
     */
    private long currentTerm() {
        try {
            RaftServer server = getServer().getNow(null);
            return server == null ? -1 : server.getDivision(getGroupId()).getInfo().getCurrentTerm();
        } catch (IOException e) {
            return -1;
        }
    }

    /**
     * This follower is behind the leader's first log entry (wiped, or down while the log was
     * purged): download the leader's checkpoint. Ratis then pauses us and calls
     * {@link #reinitialize()}, which swaps the store.
     */
    @Override
    public CompletableFuture<TermIndex> notifyInstallSnapshotFromLeader(
            org.apache.ratis.proto.RaftProtos.RoleInfoProto roleInfo, TermIndex firstTermIndexInLog) {
        String leader = roleInfo.getFollowerInfo().getLeaderInfo().getId().getId().toStringUtf8();
        LOG.info("{}: behind the leader's log (first entry {}); fetching a checkpoint from {}",
                getId(), firstTermIndexInLog, leader);
        installing = true;
        return checkpoints.fetchFrom(leader).whenComplete((dir, e) -> {
            if (e != null) {
                installing = false;
            }
        }).thenApply(dir -> {
            io.hourglass.core.storage.TermIndex at = io.hourglass.core.storage.EventStore.appliedIndexOf(dir);
            pendingCheckpoint = new Downloaded(dir, leader);
            LOG.info("{}: checkpoint from {} downloaded at applied {}", getId(), leader, at);
            return TermIndex.valueOf(at.term(), at.index());
        });
    }

    /** A downloaded checkpoint and the leader whose notice made this node fetch it. */
    private record Downloaded(java.nio.file.Path dir, String leader) {
    }

    /** The store itself is the snapshot: a position, no files. */
    private record DbSnapshot(TermIndex termIndex) implements SnapshotInfo {
        @Override
        public TermIndex getTermIndex() {
            return termIndex;
        }

        @Override
        public List<FileInfo> getFiles() {
            return List.of();
        }
    }
}
