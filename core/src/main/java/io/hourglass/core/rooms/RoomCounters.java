package io.hourglass.core.rooms;

import java.util.concurrent.atomic.LongAdder;

/** Counters of the rooms engine on this node; the server exports them on {@code /metrics}. */
public final class RoomCounters {
    /** Messages committed to a room's pending queue. */
    public final LongAdder sent = new LongAdder();
    /** Messages released by the gate (rule 2) once their release committed. */
    public final LongAdder released = new LongAdder();
    /** Messages handed to async listeners of rooms without sync members (rule 1), or dropped there. */
    public final LongAdder flushed = new LongAdder();
    /** At-least-once messages sent again by a new leader. */
    public final LongAdder redelivered = new LongAdder();
    public final LongAdder outOfBand = new LongAdder();
    /** Deliveries handed to sinks (one per recipient). */
    public final LongAdder deliveries = new LongAdder();
    /** Acks that made a member ready. */
    public final LongAdder acks = new LongAdder();
    /** Acks that changed nothing (duplicate, stale, foreign, out-of-band, not a member). */
    public final LongAdder ignoredAcks = new LongAdder();
    public final LongAdder evictions = new LongAdder();
    /** Release proposals that failed and will be retried. */
    public final LongAdder releaseFailures = new LongAdder();
}
