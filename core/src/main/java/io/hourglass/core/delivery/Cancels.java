package io.hourglass.core.delivery;

import io.hourglass.core.HourglassException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.command.QueueCommands;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.loop.EventLoop;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;

/**
 * A producer's cancel of one pending message (DESIGN §9). The leader's delivery loop decides, in
 * order with its dispatches, whether any copy went out already: if none did, the message is held
 * back from every recipient until the deletion commits, so the cancel wins; if one did, the answer
 * is "already delivered". Either way the message is deleted through Raft with its expiry entry and
 * receipts, and every replica drops its in-flight copies, so none is redelivered. The hold is this
 * leader's alone: a new leader applies a committed cancel before it dispatches anything, and an
 * uncommitted one fails to its caller, who asks again.
 */
final class Cancels {
    /** The message a cancel names, and whether a copy of it had gone out when the loop looked. */
    private record Decision(EventKey key, boolean delivered) {
    }

    private final EventLoop loop;
    private final BooleanSupplier leading;
    private final EventStore store;
    private final Replicator replicator;
    private final InFlightTracker inFlight;
    private final Dispatcher dispatcher;
    private final DeliveryMetrics metrics;
    private final Runnable requestPass;

    Cancels(EventLoop loop, BooleanSupplier leading, EventStore store, Replicator replicator,
            InFlightTracker inFlight, Dispatcher dispatcher, DeliveryMetrics metrics, Runnable requestPass) {
        this.loop = loop;
        this.leading = leading;
        this.store = store;
        this.replicator = replicator;
        this.inFlight = inFlight;
        this.dispatcher = dispatcher;
        this.metrics = metrics;
        this.requestPass = requestPass;
    }

    /**
     * Completes once the deletion has committed; exceptionally with {@link NotFoundException} when the
     * topic holds no such message (never published, acknowledged by all, expired, cancelled),
     * {@link NotLeaderException} on a follower, or the replication failure.
     */
    CompletableFuture<CancelOutcome> cancel(String topic, EventKey key) {
        return cancel(topic, () -> store.queue().message(key).filter(m -> m.getTopic().equals(topic)).map(m -> key)
                .orElseThrow(() -> new NotFoundException("topic " + topic + " holds no pending message " + key.toHex())));
    }

    /** {@link #cancel(String, EventKey)} of the message stored under schedule key {@code key}. */
    CompletableFuture<CancelOutcome> cancelKeyed(String topic, String key) {
        return cancel(topic, () -> store.queue().keyed(topic, key).orElseThrow(() -> new NotFoundException(
                "topic " + topic + " holds no pending message with key '" + HourglassException.excerpt(key) + "'")), key);
    }

    private CompletableFuture<CancelOutcome> cancel(String topic, java.util.function.Supplier<EventKey> resolve) {
        return cancel(topic, resolve, null);
    }

    /**
     * @param scheduleKey the key of a cancel by key (null by id): it also ends a recurrence whose next
     *                    firing was armed meanwhile
     */
    private CompletableFuture<CancelOutcome> cancel(String topic, java.util.function.Supplier<EventKey> resolve,
                                                    String scheduleKey) {
        if (!leading.getAsBoolean()) {
            return CompletableFuture.failedFuture(replicator.notLeader());
        }
        return loop.call(() -> {
            if (!leading.getAsBoolean()) {
                throw replicator.notLeader();
            }
            EventKey key = resolve.get();
            boolean delivered = inFlight.touched(key) || store.queue().hasAnyReceipt(key);
            if (!delivered) {
                dispatcher.hold(key);
            }
            return new Decision(key, delivered);
        }).thenCompose(d -> replicator.propose(scheduleKey != null ? QueueCommands.deleteKeyed(topic, d.key(), scheduleKey)
                        : QueueCommands.deleteMessage(topic, d.key()))
                .handle((reply, error) -> {
                    loop.submit(() -> {
                        dispatcher.unhold(d.key()); // a no-op once the deletion was applied
                        requestPass.run();
                    });
                    if (error != null) {
                        throw error instanceof CompletionException ce ? ce : new CompletionException(error);
                    }
                    if (reply.getDeletedCount() == 0) {
                        throw new NotFoundException("topic " + topic + " holds no pending message " + d.key().toHex());
                    }
                    (d.delivered() ? metrics.cancelledAfterDelivery : metrics.cancelled).increment();
                    return d.delivered() ? CancelOutcome.ALREADY_DELIVERED : CancelOutcome.CANCELLED;
                }));
    }
}
