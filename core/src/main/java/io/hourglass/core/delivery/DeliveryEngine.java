package io.hourglass.core.delivery;

import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.command.ApplyListener;
import io.hourglass.core.command.ApplyResult;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.loop.EventLoop;
import io.hourglass.core.command.QueueCommands;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The delivery pipeline of one node: hub, dispatcher, in-flight tracking, deleter and TTL janitor,
 * all owned by one {@link EventLoop} thread ({@code hourglass-delivery}). Transport threads and the
 * apply thread only post events — subscribe, ACK, NACK, disconnect, an applied entry — each costing
 * O(its own messages) on the loop, so no lock is shared between them and an ACK can never land
 * between a dispatch check and its claim.
 *
 * <p>It works only while this node leads ({@link #setLeading}); losing leadership stops
 * dispatching, closes every consumer and forgets the in-flight map, which the next leader rebuilds
 * from the replicated state.
 *
 * <p>{@link #start()} runs the loop with its timers (poll interval, delete flush, TTL sweep, next
 * due message); until then every event runs inline on the caller's thread, so tests drive
 * {@link #dispatchOnce()}, {@link #flushDeletes()} and {@link #sweepExpired()} with a manual clock.
 */
public final class DeliveryEngine implements ApplyListener, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeliveryEngine.class);

    private final EventStore store;
    private final Replicator replicator;
    private final Clock clock;
    private final DeliveryMetrics metrics = new DeliveryMetrics();
    private final EventLoop loop;
    private final InFlightTracker inFlight;
    private final Deleter deleter;
    private final Hub hub;
    private final Dispatcher dispatcher;
    private final Cancels cancels;
    private final Recurrences recurrences;
    private volatile boolean leading;
    /** Loop only: a pass is queued; the earliest armed due-time timer. */
    private boolean passQueued;
    private long timerAtMs = Long.MAX_VALUE;

    private final DeadLetters deadLetters;

    public DeliveryEngine(DeliveryConfig config, EventStore store, Replicator replicator, Clock clock) {
        this.store = store;
        this.replicator = replicator;
        this.clock = clock;
        this.loop = new EventLoop("hourglass-delivery", clock, EventLoop.Mode.INLINE_UNTIL_STARTED);
        this.inFlight = new InFlightTracker(config.inFlightTimeout().toMillis());
        this.deleter = new Deleter(replicator, config.deleteBatchMaxKeys(), metrics, () -> leading, loop::submit,
                () -> inFlight.takeCounts(clock.millis() - COUNT_AFTER_MS), inFlight::recount);
        this.hub = new Hub(config.consumerQueueSize(), this::wake, clock::millis, metrics.expiredInBuffer::increment);
        this.dispatcher = new Dispatcher(store, hub, inFlight, deleter, clock, metrics);
        this.deadLetters = new DeadLetters(replicator, store, loop::submit, () -> leading, (key, recipient, topic, afterMs) -> {
            dispatcher.defer(key, recipient, topic, clock.millis() + afterMs); // local: a failed move is not replicated
            requestPass();
        }, metrics);
        dispatcher.policies(deadLetters, this::replicateDeferral);
        this.cancels = new Cancels(loop, () -> leading, store, replicator, inFlight, dispatcher, metrics,
                this::requestPass);
        this.recurrences = new Recurrences(store, replicator, clock, loop::submit);
        loop.every(config.dispatchPollInterval().toMillis(), this::requestPass);
        loop.every(config.deleteBatchInterval().toMillis(), this::flushQuietly);
        loop.every(config.ttlSweepInterval().toMillis(), () -> quietly("TTL sweep", this::sweepExpired));
        loop.every(Recurrences.FIRE_INTERVAL_MS, () -> quietly("re-arming recurring messages", this::fireDue));
    }

    /**
     * Where dead-letter topics on other event shards go: {@code elsewhere} answers the replicator of
     * a topic's shard, or null for this engine's own (no command spans two shards, so such a move
     * publishes the copy there first, then removes the message here). Call before {@link #start()}.
     */
    public void deadLetterRoute(java.util.function.Function<String, Replicator> elsewhere) {
        deadLetters.route(elsewhere::apply);
    }

    /**
     * A group delivery's count is replicated once it is this old and still not acknowledged (DESIGN
     * §9): quickly acknowledged messages never put a count in the log. A delivery younger than this
     * when a leader crashes is counted once less by the next leader.
     */
    static final long COUNT_AFTER_MS = 1_000;

    /**
     * Proposes one FireCmd for the recurring messages that fell due and have not fired (DESIGN §9):
     * each is re-armed for its next firing at apply time. Returns how many it named.
     */
    public int fireDue() {
        return onLoop(() -> leading ? recurrences.fireDue() : 0);
    }

    /** Runs a timer's task; a failure is logged, and the timer runs it again next time. */
    private static void quietly(String what, Runnable task) {
        try {
            task.run();
        } catch (RuntimeException e) {
            LOG.error("{} failed", what, e);
        }
    }

    /** Starts the loop thread and its timers. */
    public void start() {
        loop.start();
        wake();
    }

    /** Leadership changed. Losing it closes all consumers; they reconnect to the new leader. */
    public void setLeading(boolean nowLeading) {
        if (leading == nowLeading) {
            return;
        }
        leading = nowLeading;
        loop.submit(nowLeading ? () -> {
            LOG.info("leading: dispatcher, deleter and TTL janitor active");
            dispatcher.loadReplicated();
            armTimer(dispatcher.nextDueMs());
            requestPass();
        } : this::stepDown);
    }

    private void stepDown() {
        if (leading) {
            return; // leadership came back before this event ran
        }
        LOG.info("no longer leading: closing {} consumers, dropping in-flight state", hub.size());
        hub.closeAll("this node is no longer the leader");
        deleter.failAll(new NotLeaderException(null));
        inFlight.clear();
        dispatcher.reset();
        recurrences.clear();
    }

    public boolean isLeading() {
        return leading;
    }

    /**
     * Registers a consumer, with at most {@code maxUnacked} deliveries unsettled at once (0: no limit
     * but its buffer). A named group is made durable through replication first, so that the deletion rule counts it.
     */
    public CompletableFuture<Consumer> subscribe(String topic, String group, Consumer.Sink sink, int maxUnacked) {
        if (!leading) {
            return CompletableFuture.failedFuture(replicator.notLeader());
        }
        CompletableFuture<?> durable = group.isEmpty() || store.durableGroups(topic).contains(group)
                ? CompletableFuture.completedFuture(null)
                : replicator.propose(QueueCommands.registerGroup(topic, group));
        return durable.thenCompose(done -> loop.call(() -> {
            if (!leading) {
                throw replicator.notLeader();
            }
            Consumer c = hub.register(topic, group, sink, maxUnacked);
            LOG.debug("registered {}", c);
            return c;
        }));
    }

    /**
     * Cancels a pending message of {@code topic} (see {@link Cancels}): completes once its deletion
     * committed, saying whether a copy had gone out first; NotFoundException when there is no such
     * pending message, NotLeaderException on a follower.
     */
    public CompletableFuture<CancelOutcome> cancel(String topic, EventKey key) {
        return cancels.cancel(topic, key);
    }

    /** {@link #cancel} of the topic's message stored under schedule key {@code key}. */
    public CompletableFuture<CancelOutcome> cancelKeyed(String topic, String key) {
        return cancels.cancelKeyed(topic, key);
    }

    /** {@link #ack(Consumer, EventKey, boolean)} without asking for a prompt confirmation. */
    public CompletableFuture<Void> ack(Consumer c, EventKey tag) {
        return ack(c, tag, false);
    }

    /**
     * Acknowledges a tag sent to this consumer. The future completes when the acknowledgement is
     * replicated; with {@code confirm} the deletion is proposed at once (group-committed with other
     * confirms) instead of with the next periodic batch.
     *
     * @throws InvalidRequestException when the tag was not delivered on this consumer's stream
     */
    public CompletableFuture<Void> ack(Consumer c, EventKey tag, boolean confirm) {
        requireOwned(c, tag, "ACK");
        metrics.acks.increment();
        CompletableFuture<Void> committed = new CompletableFuture<>();
        loop.submit(() -> {
            CompletableFuture<Void> deletion = settleAck(c, tag);
            deletion.whenComplete((v, e) -> {
                if (e == null) {
                    committed.complete(null);
                } else {
                    committed.completeExceptionally(e);
                }
            });
            if (confirm && leading) {
                deleter.flushSoon();
            }
        });
        return committed;
    }

    /**
     * Plain ACKs of several tags (one client frame) as one loop event; nobody waits for their
     * replication. Returns the tags refused because they were not delivered on this consumer's
     * stream (unknown, already settled, or sent to another consumer), in order.
     */
    public List<EventKey> ackAll(Consumer c, List<EventKey> tags) {
        List<EventKey> owned = new ArrayList<>(tags.size());
        List<EventKey> refused = new ArrayList<>();
        for (EventKey tag : tags) {
            (c.takeTag(tag) ? owned : refused).add(tag);
        }
        if (!owned.isEmpty()) {
            metrics.acks.add(owned.size());
            loop.submit(() -> owned.forEach(tag -> settleAck(c, tag)));
        }
        return refused;
    }

    /** Loop only: the ACK's effect — the recipient is done, the deletion is queued; completes when replicated. */
    private CompletableFuture<Void> settleAck(Consumer c, EventKey tag) {
        inFlight.markAcked(tag, c.recipient());
        if (!c.isUniversal()) {
            return deleter.submit(tag, c.group());
        } else if (store.durableGroups(c.topic()).isEmpty() && inFlight.universalSettled(tag)) {
            return deleter.submit(tag, StateApplier.ALL_GROUPS);
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Makes the message redeliverable at once. */
    public void nack(Consumer c, EventKey tag) {
        nack(c, tag, 0);
    }

    /**
     * NACK with a delay: the consumer's group (or the universal consumer itself) is offered the
     * message again {@code delayMs} after now, not before. A group's deferral is replicated, so a new
     * leader waits too; if that proposal fails, this leader still waits.
     */
    public void nack(Consumer c, EventKey tag, long delayMs) {
        requireOwned(c, tag, "NACK");
        metrics.nacks.increment();
        loop.submit(() -> {
            if (!inFlight.release(tag, c.recipient())) {
                return;
            }
            long now = clock.millis();
            if (delayMs <= 0) { // the group's back-off, if it has one
                long at = dispatcher.retry(tag, c.recipient(), c.topic(), now);
                if (at > now) {
                    armTimer(at);
                } else {
                    requestPass();
                }
                return;
            }
            long until = now + delayMs;
            dispatcher.defer(tag, c.recipient(), c.topic(), until);
            armTimer(until);
            if (c.recipient() instanceof Recipient.Group g) {
                replicateDeferral(tag, g.name(), until);
            }
        });
    }

    /** Replicates a durable group's deferral; if that fails, this leader still waits. */
    private void replicateDeferral(EventKey tag, String group, long until) {
        replicator.propose(QueueCommands.defer(tag, group, until)).whenComplete((r, e) -> {
            if (e != null) {
                LOG.debug("deferral of {} for {} not replicated ({}); this leader still waits", tag, group, e.toString());
            }
        });
    }

    /**
     * The consumer's stream ended: it gets nothing more, and what it held becomes redeliverable,
     * on the loop in O(the consumer's own in-flight messages) — never on the caller's transport thread.
     */
    public void disconnect(Consumer c) {
        loop.submit(() -> {
            if (hub.unregister(c)) {
                release(c);
            }
        });
    }

    private void release(Consumer c) {
        List<EventKey> released = inFlight.releaseConsumer(c, c.takeUnsent());
        LOG.debug("{} disconnected, released {} in-flight messages", c, released.size());
        boolean settleUniversal = c.isUniversal() && store.durableGroups(c.topic()).isEmpty();
        for (EventKey key : released) {
            if (!c.isUniversal()) {
                dispatcher.redeliver(key, c.recipient(), c.topic());
            } else if (settleUniversal && inFlight.universalSettled(key)) {
                deleter.submit(key, StateApplier.ALL_GROUPS);
            }
        }
        requestPass();
    }

    /** Why an ACK or NACK of {@code tag} is refused when the tag is not this stream's to settle. */
    public static String notOwned(String what, EventKey tag) {
        return what + " for tag " + tag.toHex()
                + ": no such message was delivered on this stream (unknown, already acknowledged, or sent to another consumer)";
    }

    private void requireOwned(Consumer c, EventKey tag, String what) {
        if (!c.takeTag(tag)) {
            throw new InvalidRequestException(notOwned(what, tag));
        }
    }

    /** Every replica, apply thread: hands the entry's effects to the loop (a follower's loop ignores them). */
    @Override
    public void onApplied(ApplyResult result) {
        if (!leading || (result.published().isEmpty() && result.deleted().isEmpty() && result.receipts().isEmpty())) {
            return;
        }
        loop.submit(() -> applied(result));
    }

    private void applied(ApplyResult result) {
        if (!leading) {
            return;
        }
        for (ApplyResult.Receipt r : result.receipts()) {
            inFlight.clearRecipient(r.key(), new Recipient.Group(r.group()));
        }
        for (EventKey key : result.deleted()) {
            for (String owner : inFlight.clearMessage(key)) {
                Consumer c = hub.consumer(owner);
                if (c != null) {
                    c.forgetTag(key);
                }
            }
            dispatcher.deleted(key);
        }
        if (!result.published().isEmpty()) {
            long earliest = dispatcher.published(result.published());
            if (earliest <= clock.millis()) {
                requestPass();
            } else {
                armTimer(earliest);
            }
        }
    }

    /** Asks for a pass from any thread; passes run on the loop, at most one queued at a time. */
    private void wake() {
        loop.submit(this::requestPass);
    }

    /** Loop only: queues one pass unless one is queued already (the started loop only; tests call {@link #dispatchOnce()}). */
    private void requestPass() {
        if (!passQueued && loop.isStarted()) {
            passQueued = true;
            loop.submit(this::runPass);
        }
    }

    private void runPass() {
        passQueued = false;
        if (!leading) {
            return;
        }
        if (!replicator.holdsLease()) {
            metrics.passesWithoutLease.increment();
            return;
        }
        if (dispatcher.pass() > 0) {
            requestPass(); // more may be waiting for buffers that still have room
        }
        armTimer(dispatcher.nextDueMs());
    }

    /** Loop only: a pass at {@code atMs}, when no earlier timer is armed. */
    private void armTimer(long atMs) {
        if (atMs == Long.MAX_VALUE || atMs >= timerAtMs || !loop.isStarted()) {
            return;
        }
        timerAtMs = atMs;
        loop.at(atMs, () -> {
            if (timerAtMs <= clock.millis()) {
                timerAtMs = Long.MAX_VALUE;
            }
            requestPass();
        });
    }

    /** Runs one dispatcher pass now (tests); returns the deliveries made. */
    public int dispatchOnce() {
        return onLoop(() -> leading ? dispatcher.pass() : 0);
    }

    /** Proposes every queued deletion now; the future completes when all batches have been answered. */
    public CompletableFuture<Void> flushDeletes() {
        if (!leading) { // also once closed (a closing node's hand-over asks): nothing of ours to replicate
            return CompletableFuture.completedFuture(null);
        }
        List<CompletableFuture<Void>> batches = onLoop(() -> leading ? deleter.flush() : List.of());
        return CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new)).exceptionally(e -> null);
    }

    /** Queues for deletion every message whose TTL has passed, with or without consumers; returns how many. */
    public int sweepExpired() {
        return onLoop(() -> {
            if (!leading) {
                return 0;
            }
            int[] n = {0};
            store.queue().scanExpired(clock.millis(), key -> {
                metrics.expiryKeysRead.increment();
                if (deleter.submitOnce(key, StateApplier.ALL_GROUPS)) {
                    metrics.expired.increment();
                    n[0]++;
                }
                return true;
            });
            if (n[0] > 0) {
                LOG.debug("TTL janitor queued {} expired messages", n[0]);
            }
            return n[0];
        });
    }

    /** Runs {@code body} on the loop (inline before the start) and waits for its answer. */
    private <T> T onLoop(java.util.concurrent.Callable<T> body) {
        if (loop.inLoop()) {
            try {
                return body.call();
            } catch (Exception e) {
                throw e instanceof RuntimeException re ? re : new IllegalStateException(e);
            }
        }
        return loop.call(body).join();
    }

    private void flushQuietly() {
        if (leading) {
            deleter.flush();
        }
    }

    public DeliveryMetrics metrics() {
        return metrics;
    }

    public Hub hub() {
        return hub;
    }
    public int inFlightCount() {
        return inFlight.held();
    }

    /** Deliveries of one topic awaiting an ACK (meaningful on the leader). */
    public int inFlightCount(String topic) {
        return inFlight.held(EventKey.topicHash(topic));
    }

    /** The same for one durable group of the topic. */
    public int inFlightCount(String topic, String group) {
        return inFlight.held(EventKey.topicHash(topic), group);
    }

    public int queuedDeletions() {
        return deleter.queued();
    }

    @Override
    public void close() {
        leading = false;
        try {
            loop.call(() -> {
                stepDown();
                return null;
            }).get(5, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            LOG.warn("delivery loop did not step down cleanly: {}", e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        loop.close();
    }
}
