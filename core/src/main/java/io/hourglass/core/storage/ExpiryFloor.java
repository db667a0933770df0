package io.hourglass.core.storage;

/**
 * Where the TTL janitor's sweep of the expiry index starts: no live key of the index lies below
 * the floor. Every message deleted (acknowledged or expired) leaves its expiry key as a tombstone
 * until a compaction drops it, and the index, small and rarely written, is compacted rarely: a sweep
 * from the index's start walked every tombstone of the hours before, once a minute, on the delivery
 * loop. From the floor, a sweep walks only what was deleted since the last one.
 *
 * <p>Kept per {@link Db} (a restored DB starts at 0). Thread-safe: the apply thread reports keys
 * added, the delivery loop sweeps. A key is reported after its batch is written, and a sweep begins
 * before its snapshot is taken: a key then is either in the snapshot or reported during the sweep,
 * and the floor the sweep leaves is never above it.
 */
final class ExpiryFloor {
    private long floor;
    /** The earliest expiry reported since the current sweep began. */
    private long addedSince = Long.MAX_VALUE;

    /** Keys expiring at {@code expiresAtMs} and later were written (MAX_VALUE: none). */
    void added(long expiresAtMs) {
        if (expiresAtMs == Long.MAX_VALUE) {
            return; // most batches: no lock taken
        }
        synchronized (this) {
            floor = Math.min(floor, expiresAtMs);
            addedSince = Math.min(addedSince, expiresAtMs);
        }
    }

    /** A sweep begins (before its snapshot); returns where it starts. */
    synchronized long beginSweep() {
        addedSince = Long.MAX_VALUE;
        return floor;
    }

    /** The sweep found its first live key at {@code firstLeftMs} (or nothing before it). */
    synchronized void endSweep(long firstLeftMs) {
        floor = Math.min(firstLeftMs, addedSince);
    }
}
