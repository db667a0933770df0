package io.hourglass.raft.disk;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The free space of the file systems that hold a node's data (its RocksDB and Raft log directories):
 * below {@code node.minFreeDiskMb} a node does not start, and a running node stops before a write
 * fails half-way (see the package documentation for why it stops rather than waits). Also tells
 * whether a failure was a full disk, for the one ERROR the node logs about it.
 *
 * <p>Thread-safe: it only reads the file systems; the last reading is a volatile.
 */
public final class FreeSpace {
    private static final String ENOSPC = "No space left on device";

    private final List<Path> dirs;
    private final long minFreeBytes;
    private volatile long lastFree = -1;

    /**
     * @param dirs the directories whose file systems hold the node's data (they need not exist yet)
     * @param minFreeBytes the least free space a node runs with; 0 checks nothing
     */
    public FreeSpace(List<Path> dirs, long minFreeBytes) {
        if (dirs.isEmpty() || minFreeBytes < 0) {
            throw new IllegalArgumentException("directories " + dirs + ", minimum " + minFreeBytes);
        }
        this.dirs = List.copyOf(dirs);
        this.minFreeBytes = minFreeBytes;
    }

    public long minFreeBytes() {
        return minFreeBytes;
    }

    /** The least free space among the file systems at the last look (-1 before the first). */
    public long lastFree() {
        return lastFree;
    }

    /** The least free space among the file systems, read now; -1 when it cannot be read. */
    public long free() {
        try {
            lastFree = least().usable;
            return lastFree;
        } catch (IOException e) {
            return -1;
        }
    }

    /**
     * Null while every file system has at least {@code node.minFreeDiskMb} free (or the check is off);
     * else which directory lacks space, how much is free, and the minimum — one clause for a log line.
     */
    public String shortage() throws IOException {
        Reading least = least();
        lastFree = least.usable;
        if (minFreeBytes == 0 || least.usable >= minFreeBytes) {
            return null;
        }
        return "the disk is full: " + describe(least) + ", below node.minFreeDiskMb (" + mib(minFreeBytes) + ")";
    }

    /** At start, before the store opens: the node does not start while {@link #shortage()} says so. */
    public void requireAtStart() throws IOException {
        String shortage = shortage();
        if (shortage != null) {
            throw new DiskFullException("not starting: " + shortage + ". Free some space there and start it again "
                    + "(a supervisor that restarts it retries)");
        }
    }

    /**
     * What to add to the report of a failure when the disk is full: the failure says ENOSPC, or space
     * is short now; else "".
     */
    public String explain(Throwable failure) {
        boolean enospc = false;
        for (Throwable t = failure; t != null; t = t.getCause()) {
            enospc |= t instanceof DiskFullException || (t.getMessage() != null && t.getMessage().contains(ENOSPC));
        }
        try {
            Reading least = least();
            if (!enospc && (minFreeBytes == 0 || least.usable >= minFreeBytes)) {
                return "";
            }
            return "; the disk is full: " + describe(least);
        } catch (IOException e) {
            return enospc ? "; the disk is full" : "";
        }
    }

    private record Reading(Path dir, FileStore store, long usable, long total) {
    }

    /** The file system with the least free space, named by the first directory on it; each read once. */
    private Reading least() throws IOException {
        Reading least = null;
        java.util.Set<FileStore> seen = new java.util.HashSet<>();
        for (Path dir : dirs) {
            FileStore store = Files.getFileStore(existing(dir));
            if (!seen.add(store)) {
                continue;
            }
            Reading r = new Reading(dir, store, store.getUsableSpace(), store.getTotalSpace());
            if (least == null || r.usable < least.usable) {
                least = r;
            }
        }
        return least;
    }

    private static String describe(Reading r) {
        return "the data directory " + r.dir + " has " + mib(r.usable) + " free of " + mib(r.total)
                + " (file system " + r.store + ")";
    }

    /** {@code dir} or its nearest ancestor that exists: a node's first start creates its directories. */
    private static Path existing(Path dir) {
        Path p = dir.toAbsolutePath();
        while (p != null && !Files.exists(p)) {
            p = p.getParent();
        }
        return p == null ? dir.toAbsolutePath().getRoot() : p;
    }

    static String mib(long bytes) {
        return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024.0));
    }
}
