package io.hourglass.chaos.run;

import io.hourglass.chaos.SegmentFiles;
import io.hourglass.chaos.ServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The chaos run's faults on one node's disk: a damaged Raft log and a full disk. Each leaves the
 * node as a supervisor plus an operator would: a node that refuses to start on a corrupt log
 * (exit 65) is wiped and started empty, one that stopped on a full disk (exit 70) is started again
 * once there is space. Anything else is a failure of the run.
 */
final class DiskFaults {
    /** Exit statuses the server documents (README, systemd unit). */
    static final int CORRUPT_LOG_EXIT = 65;
    static final int DISK_FULL_EXIT = 70;
    private static final Duration EXIT_TIMEOUT = Duration.ofSeconds(90);

    private DiskFaults() {
    }

    /** What was done to the log, for the fault line. */
    enum Damage {
        /** A byte flipped inside an entry that good entries follow: corrupt, the node must refuse to start. */
        FLIPPED,
        /** The open segment cut inside its last entry: a torn write, the node cuts it off and starts. */
        TORN
    }

    /**
     * Damages the log of {@code victim}, which is down: a flipped byte (in its newest closed segment,
     * else in the first of at least two entries of the open one) when {@code flip} and possible, else a
     * torn last entry.
     */
    static Damage damage(ServerProcess victim, boolean flip) {
        SegmentFiles segments = SegmentFiles.of(victim.dataDir());
        Path open = segments.open().orElse(null);
        List<SegmentFiles.Frame> frames = open == null ? List.of() : SegmentFiles.frames(open);
        List<Path> closed = segments.closed();
        try {
            if (flip && !closed.isEmpty()) {
                Path newest = closed.get(closed.size() - 1);
                SegmentFiles.flipByte(newest, Files.size(newest) / 2);
                return Damage.FLIPPED;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (flip && frames.size() >= 2) {
            SegmentFiles.Frame first = frames.get(0);
            SegmentFiles.flipByte(open, first.offset() + first.length() / 2);
            return Damage.FLIPPED;
        }
        if (frames.isEmpty()) {
            throw new IllegalStateException(victim.nodeId() + " has no entry in an open segment to damage");
        }
        SegmentFiles.Frame last = frames.get(frames.size() - 1);
        SegmentFiles.truncate(open, last.offset() + last.length() / 2);
        return Damage.TORN;
    }

    /**
     * Starts {@code victim} on its damaged log. A flipped byte must keep it from starting (exit 65,
     * before it runs Raft, so it can never be elected on that log); it is then wiped and started
     * empty, to catch up from the leader. A torn write it must repair on its own.
     */
    static void restartDamaged(ServerProcess victim, Damage damage) {
        victim.start();
        if (damage == Damage.FLIPPED) {
            int status = exitOf(victim);
            if (status != CORRUPT_LOG_EXIT) {
                throw new AssertionError(victim.nodeId() + " started on a log with a flipped byte: exit status "
                        + status + " (expected " + CORRUPT_LOG_EXIT + ")");
            }
            victim.wipeData();
            victim.start();
        }
        victim.awaitReady(ChaosCluster.READY_TIMEOUT);
    }

    /**
     * Fills the small disk under its node's feet: the node must stop by itself with exit 70; once
     * the filler is gone it is started again and must catch up.
     */
    static void fillAndRecover(java.util.Map.Entry<ServerProcess, io.hourglass.chaos.Tmpfs> smallDisk,
                               java.util.function.BiConsumer<String, String> announce,
                               java.util.function.ObjLongConsumer<String> record) {
        ServerProcess victim = smallDisk.getKey();
        announce.accept(victim.nodeId(), "(its data directory's file system filled: it must stop, exit " + DISK_FULL_EXIT
                + "; started again once the space is back)");
        long start = System.currentTimeMillis();
        smallDisk.getValue().fill();
        int status = exitOf(victim);
        smallDisk.getValue().free();
        if (status != DISK_FULL_EXIT) {
            throw new AssertionError(victim.nodeId() + " on a full disk: exit status " + status + " (expected "
                    + DISK_FULL_EXIT + ")");
        }
        victim.start();
        victim.awaitReady(ChaosCluster.READY_TIMEOUT);
        record.accept(victim.nodeId(), start);
    }

    /** The exit status of {@code victim}, which must stop by itself; one still running is killed (status -1). */
    private static int exitOf(ServerProcess victim) {
        try {
            int status = victim.awaitOwnExit(EXIT_TIMEOUT);
            if (status == -1) {
                victim.kill();
            }
            return status;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            victim.kill();
            throw new IllegalStateException("interrupted waiting for " + victim.nodeId() + " to stop", e);
        }
    }
}
