package io.hourglass.core.delivery;

import io.hourglass.core.command.QueueCommands;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.storage.EventKey;
import java.util.HashSet;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves messages out of a durable group once they reached its {@code max_deliveries} (DESIGN §9).
 * The dispatcher, about to deliver a message to a group for one time too many, hands it here
 * instead; a {@code DeadLetterCmd} publishes the copy to the dead-letter topic and writes the
 * group's receipt in one batch. While it is being replicated the group is offered the message no
 * more; if it fails the message goes back to the group's redeliveries after a back-off that doubles
 * with each failure of the same move ({@link #FIRST_RETRY_MS} to {@link #MAX_RETRY_MS}), so a leader
 * that cannot commit (cut off by a partition, its clock refused) does not propose the move again and
 * again as fast as the proposals fail; a new leader counts again from the replicated count and sends
 * it again. Loop only; answers come back through {@code loop}.
 */
final class DeadLetters {
    private static final Logger LOG = LoggerFactory.getLogger(DeadLetters.class);

    private record Move(EventKey key, String group) {
    }

    /**
     * Where a dead-letter topic lives when it is not this engine's shard: the replicator of its own
     * shard, or null when it is this one's (the copy is then written by the move itself).
     */
    interface Route {
        Replicator elsewhere(String deadLetterTopic);
    }

    /** Offers a message whose move failed to its group again, {@code afterMs} from now. */
    interface GiveBack {
        void offerAgain(EventKey key, Recipient recipient, String topic, long afterMs);
    }

    /** The wait before a failed move is tried again the first time; it doubles with each failure. */
    static final long FIRST_RETRY_MS = 100;
    /** The longest wait between two tries of one move. */
    static final long MAX_RETRY_MS = 10_000;
    /** At most this many failing moves are remembered; beyond, the counts start again (bounded memory). */
    private static final int MAX_FAILING = 4096;

    private final Replicator replicator;
    private final java.util.concurrent.Executor loop;
    private final BooleanSupplier leading;
    private final GiveBack giveBack;
    private final DeliveryMetrics metrics;
    private final Set<Move> moving = new HashSet<>();
    /** Consecutive failures of each move that failed and has not succeeded since. */
    private final java.util.Map<Move, Integer> failures = new java.util.HashMap<>();
    /** Moves decided during a pass, proposed after it ({@link #proposeQueued}): never within its iteration. */
    private final java.util.List<Runnable> queued = new java.util.ArrayList<>();
    private final io.hourglass.core.storage.EventStore store;
    private volatile Route route = topic -> null;

    /** @param giveBack offers a message whose move failed to its group again */
    DeadLetters(Replicator replicator, io.hourglass.core.storage.EventStore store, java.util.concurrent.Executor loop,
                BooleanSupplier leading, GiveBack giveBack, DeliveryMetrics metrics) {
        this.replicator = replicator;
        this.store = store;
        this.loop = loop;
        this.leading = leading;
        this.giveBack = giveBack;
        this.metrics = metrics;
    }

    void route(Route route) {
        this.route = route;
    }

    /** Whether the message is on its way to {@code group}'s dead-letter topic. */
    boolean moving(EventKey key, String group) {
        return !moving.isEmpty() && moving.contains(new Move(key, group));
    }

    /** Moves the message of {@code topic} out of {@code group} after {@code deliveries} deliveries. */
    void move(EventKey key, String topic, String group, String deadLetterTopic, int deliveries, String reason) {
        Move m = new Move(key, group);
        if (!moving.add(m)) {
            return;
        }
        LOG.debug("{} of {} reached {} deliveries to group {}: moving it to {}", key, topic, deliveries, group,
                deadLetterTopic);
        queued.add(() -> propose(m, topic, deadLetterTopic, deliveries, reason));
    }

    /** Proposes the moves the last pass decided. */
    void proposeQueued() {
        if (queued.isEmpty()) {
            return;
        }
        java.util.List<Runnable> now = java.util.List.copyOf(queued);
        queued.clear();
        now.forEach(Runnable::run);
    }

    private void propose(Move m, String topic, String deadLetterTopic, int deliveries, String reason) {
        EventKey key = m.key();
        String group = m.group();
        java.util.concurrent.CompletableFuture<?> proposed;
        try {
            Replicator there = route.elsewhere(deadLetterTopic);
            proposed = there == null
                    ? replicator.propose(QueueCommands.deadLetter(key, group, deadLetterTopic, deliveries, reason))
                    : moveAcross(there, key, group, deadLetterTopic, deliveries, reason);
        } catch (RuntimeException e) {
            proposed = java.util.concurrent.CompletableFuture.failedFuture(e);
        }
        proposed.whenComplete((r, e) -> loop.execute(() -> {
            if (!moving.remove(m)) {
                return; // leadership changed meanwhile: the next leader decides again
            }
            if (e == null) {
                failures.remove(m);
                metrics.deadLettered.increment();
            } else if (leading.getAsBoolean()) {
                long wait = retryAfterMs(m);
                if (wait == FIRST_RETRY_MS) {
                    LOG.warn("moving {} of group {} to {} failed, offered again in {} ms: {}", key, group,
                            deadLetterTopic, wait, e.toString());
                } else {
                    LOG.debug("moving {} of group {} to {} failed again, offered again in {} ms: {}", key, group,
                            deadLetterTopic, wait, e.toString());
                }
                giveBack.offerAgain(key, new Recipient.Group(group), topic, wait);
            }
        }));
    }

    /**
     * A move to a dead-letter topic on another shard (no command spans two): the copy is published
     * there first, with a producer id naming the message and group, so that a move tried again after
     * a failure stores it once; then this shard records the receipt and removes the message.
     */
    private java.util.concurrent.CompletableFuture<?> moveAcross(Replicator there, EventKey key, String group,
                                                                 String deadLetterTopic, int deliveries, String reason) {
        java.util.Optional<io.hourglass.core.proto.StoredMessage> stored = store.queue().message(key);
        if (stored.isEmpty()) {
            return java.util.concurrent.CompletableFuture.completedFuture(null); // acknowledged or removed meanwhile
        }
        io.hourglass.core.proto.StoredMessage m = stored.get();
        io.hourglass.core.proto.NewMessage copy = QueueCommands.message(deadLetterTopic, m.getPayload(),
                io.hourglass.core.command.QueueApplier.deadLetterHeaders(m, key, group, deliveries, reason), 0, 0,
                "hourglass-dead-letter:" + key.toHex() + ":" + group);
        return there.propose(QueueCommands.publish(java.util.List.of(copy))).thenCompose(published ->
                replicator.propose(QueueCommands.deadLetterCopiedElsewhere(key, group, deadLetterTopic, deliveries, reason)));
    }

    /** The wait before the next try of a move that just failed: doubling from the first to the longest. */
    private long retryAfterMs(Move m) {
        if (failures.size() >= MAX_FAILING && !failures.containsKey(m)) {
            failures.clear();
        }
        int n = failures.merge(m, 1, Integer::sum);
        return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS << Math.min(n - 1, 20));
    }

    void clear() {
        moving.clear();
        queued.clear();
        failures.clear();
    }
}
