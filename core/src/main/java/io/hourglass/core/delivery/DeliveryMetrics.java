package io.hourglass.core.delivery;

import java.util.concurrent.atomic.LongAdder;

/** Counters of the delivery pipeline; the server exports them on {@code /metrics}. */
public final class DeliveryMetrics {
    public final LongAdder dispatched = new LongAdder();
    public final LongAdder redelivered = new LongAdder();
    public final LongAdder expired = new LongAdder();
    /** Deliveries not sent because their TTL passed while they waited in a consumer's buffer. */
    public final LongAdder expiredInBuffer = new LongAdder();
    /** Committed cancels: before any copy went out; after one had. */
    public final LongAdder cancelled = new LongAdder();
    public final LongAdder cancelledAfterDelivery = new LongAdder();
    /** Messages moved to a group's dead-letter topic after its max deliveries (committed moves). */
    public final LongAdder deadLettered = new LongAdder();
    /** Redeliveries a group's back-off delayed (after a NACK without a delay, or an in-flight timeout). */
    public final LongAdder backedOff = new LongAdder();
    public final LongAdder acks = new LongAdder();
    public final LongAdder nacks = new LongAdder();
    public final LongAdder deleteBatches = new LongAdder();
    public final LongAdder deleteBatchKeys = new LongAdder();
    public final LongAdder deleteFailures = new LongAdder();
    public final LongAdder dispatchPasses = new LongAdder();
    /** Passes not run because the leader could not show its lease (a majority heard lately). */
    public final LongAdder passesWithoutLease = new LongAdder();
    /** Topic range scans; only topics with consumers are scanned. */
    public final LongAdder topicScans = new LongAdder();
    /** Stored messages a pass decoded: scanned messages someone still needed, plus point reads of redeliveries. */
    public final LongAdder messagesRead = new LongAdder();
    /** Expiry-index entries the TTL janitor visited (only expired ones: its cost is O(expired)). */
    public final LongAdder expiryKeysRead = new LongAdder();
    /** Told the size of every committed delete batch (the server records a distribution). */
    public volatile java.util.function.IntConsumer deleteBatchObserver = n -> { };
    /** Sum of (delivered − due) over dispatched messages, for the mean lateness. */
    public final LongAdder latenessMsSum = new LongAdder();
}
