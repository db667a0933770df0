package io.hourglass.raft;

import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.disk.CorruptRaftLogException;
import io.hourglass.raft.disk.DiskFullException;
import io.hourglass.raft.disk.FreeSpace;
import io.hourglass.raft.disk.RaftLogCheck;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a node does about its disk (the policy is in {@code io.hourglass.raft.disk}): checks the Raft log
 * before Ratis opens it, reads Ratis' own refusal of a damaged log as the same refusal, and looks at the
 * free space of the data directory every second, tripping the node's {@link FailStop} when it is short.
 *
 * <p>Thread-safe: the watch runs on its own daemon thread; the rest is called by RaftNode's starter.
 */
final class DiskGuard implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DiskGuard.class);

    private final RaftConfig config;
    private final EventStore store;
    /** The group whose log {@link #checkLog()} checks. */
    private final org.apache.ratis.protocol.RaftGroupId groupId;
    private final long maxFrameBytes;
    private final FreeSpace freeSpace;
    private final ScheduledExecutorService watch;
    private volatile int logRepairs;

    /** @param maxFrameBytes the largest entry Ratis may write (its write buffer) */
    DiskGuard(RaftConfig config, EventStore store, long maxFrameBytes, org.apache.ratis.protocol.RaftGroupId groupId) {
        this.config = config;
        this.groupId = groupId;
        this.store = store;
        this.maxFrameBytes = maxFrameBytes;
        this.freeSpace = new FreeSpace(List.of(config.storageDir(), store.directory()), config.minFreeDiskBytes());
        this.watch = Daemons.scheduler("hourglass-free-space-" + config.nodeId());
    }

    FreeSpace freeSpace() {
        return freeSpace;
    }

    /** The node's data directory: the parent of its Raft storage, named in the repair advice. */
    private Path dataDir() {
        return config.storageDir().toAbsolutePath().getParent();
    }

    /**
     * The log check (see {@link RaftLogCheck}); call it before the Raft server starts.
     *
     * @return where the log ends now when the check cut a torn tail off it (or the store's applied
     *         index, if later): entries this node had acknowledged may be gone
     * @throws CorruptRaftLogException when the node must not start on its log (logged here at ERROR)
     */
    OptionalLong checkLog() throws IOException {
        Path current = config.storageDir().resolve(groupId.getUuid().toString()).resolve("current");
        try {
            long applied = store.appliedIndex().index();
            RaftLogCheck.Result result = new RaftLogCheck(config.nodeId(), dataDir(), maxFrameBytes).check(current, applied);
            logRepairs = result.repairs().size();
            return result.cutAt().isPresent()
                    ? OptionalLong.of(Math.max(result.cutAt().getAsLong(), applied)) : OptionalLong.empty();
        } catch (CorruptRaftLogException e) {
            LOG.error("{}: not starting: {}", config.nodeId(), e.getMessage());
            throw e;
        }
    }

    /** Repairs the log check made at this start. */
    int logRepairs() {
        return logRepairs;
    }

    /**
     * Ratis' own refusal to open a damaged log that the check let through, as the same refusal (logged
     * here at ERROR); empty when {@code failure} is about something else (permissions, a port in use…).
     */
    Optional<CorruptRaftLogException> corruptLogIn(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            String message = String.valueOf(t.getMessage());
            if (t instanceof org.apache.ratis.protocol.exceptions.ChecksumException
                    || t instanceof org.apache.ratis.io.CorruptedFileException
                    || message.contains("gap between") || message.contains("Found a gap between logs")) {
                CorruptRaftLogException refusal = RaftLogCheck.refusal(config.storageDir(),
                        "Ratis cannot open it: " + message, dataDir(), failure);
                LOG.error("{}: not starting: {}", config.nodeId(), refusal.getMessage());
                return Optional.of(refusal);
            }
        }
        return Optional.empty();
    }

    /** Starts the free-space watch (unless {@code node.minFreeDiskMb} is 0); it trips {@code failStop}. */
    void watch(FailStop failStop, BooleanSupplier closing) {
        if (freeSpace.minFreeBytes() == 0) {
            return;
        }
        watch.scheduleWithFixedDelay(() -> {
            try {
                String shortage = freeSpace.shortage();
                if (shortage != null && !closing.getAsBoolean()) {
                    failStop.trip("the free-space check", new DiskFullException(shortage
                            + ": stopping this node before a write fails half-way; start it again once space is freed"));
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("{}: cannot read the free space of the data directory: {}", config.nodeId(), e.toString());
            }
        }, 1, 1, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        watch.shutdownNow();
    }
}
