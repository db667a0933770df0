package io.hourglass.core.delivery;

import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.command.ApplyListener;
import io.hourglass.core.command.ApplyResult;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.RegisterGroupCmd;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The delivery pipeline of one node: hub, dispatcher, in-flight tracking, deleter and TTL janitor.
 * It works only while this node leads ({@link #setLeading}); losing leadership stops dispatching,
 * closes every consumer and forgets the in-flight map, which the next leader rebuilds from the
 * replicated state. It listens to every applied entry on every replica, so committed deletes
 * clear in-flight entries everywhere.
 *
 * <p>{@link #start()} runs the dispatcher loop and the deleter/janitor timers on named threads;
 * tests leave it unstarted and drive {@link #dispatchOnce()}, {@link #flushDeletes()} and
 * {@link #sweepExpired()} with a manual clock.
 */
public final class DeliveryEngine implements ApplyListener, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeliveryEngine.class);

    private final DeliveryConfig config;
    private final EventStore store;
    private final Replicator replicator;
    private final Clock clock;
    private final DeliveryMetrics metrics = new DeliveryMetrics();
    private final InFlightTracker inFlight;
    private final Deleter deleter;
    private final Hub hub;
    private final Dispatcher dispatcher;
    private volatile boolean leading;
    private Thread dispatcherThread;
    private ScheduledExecutorService timers;
    /**
     * Where a disconnected consumer's in-flight messages are released: inline until {@link #start()}
     * (tests drive the engine synchronously), then the pipeline's own single thread, so that mass
     * disconnects queue small tasks instead of transport threads.
     */
    private volatile Executor releases = Runnable::run;
    private ExecutorService releaseThread;

    public DeliveryEngine(DeliveryConfig config, EventStore store, Replicator replicator, Clock clock) {
        this.config = config;
        this.store = store;
        this.replicator = replicator;
        this.clock = clock;
        this.inFlight = new InFlightTracker(config.inFlightTimeout().toMillis());
        this.deleter = new Deleter(replicator, config.deleteBatchMaxKeys(), metrics, () -> leading);
        this.hub = new Hub(config.consumerQueueSize(), this::wake);
        this.dispatcher = new Dispatcher(store, hub, inFlight, deleter, clock, metrics,
                config.dispatchPollInterval().toMillis(), () -> leading && replicator.holdsLease());
    }

    /** Starts the dispatcher loop and the deleter and janitor timers. */
    public synchronized void start() {
        if (dispatcherThread != null) {
            return;
        }
        dispatcherThread = new Thread(dispatcher, "hourglass-dispatcher");
        dispatcherThread.setDaemon(true);
        dispatcherThread.start();
        releaseThread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "hourglass-delivery-releases");
            t.setDaemon(true);
            return t;
        });
        releases = releaseThread;
        timers = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hourglass-delivery-timers");
            t.setDaemon(true);
            return t;
        });
        long deleteMs = config.deleteBatchInterval().toMillis();
        timers.scheduleWithFixedDelay(this::flushQuietly, deleteMs, deleteMs, TimeUnit.MILLISECONDS);
        long sweepMs = config.ttlSweepInterval().toMillis();
        timers.scheduleWithFixedDelay(this::sweepQuietly, sweepMs, sweepMs, TimeUnit.MILLISECONDS);
    }

    /** Leadership changed. Losing it closes all consumers; they reconnect to the new leader. */
    public void setLeading(boolean nowLeading) {
        if (leading == nowLeading) {
            return;
        }
        leading = nowLeading;
        if (nowLeading) {
            LOG.info("leading: dispatcher, deleter and TTL janitor active");
            wake();
        } else {
            LOG.info("no longer leading: closing {} consumers, dropping in-flight state", hub.size());
            hub.closeAll("this node is no longer the leader");
            deleter.failAll(new NotLeaderException(null));
            inFlight.clear();
        }
    }

    public boolean isLeading() {
        return leading;
    }

    /**
     * Registers a consumer. A named group is made durable through replication first, so that the
     * deletion rule counts it before it receives anything.
     */
    public CompletableFuture<Consumer> subscribe(String topic, String group, Consumer.Sink sink) {
        if (!leading) {
            return CompletableFuture.failedFuture(new NotLeaderException(replicator.leaderHint()));
        }
        CompletableFuture<?> durable = group.isEmpty() || store.durableGroups(topic).contains(group)
                ? CompletableFuture.completedFuture(null)
                : replicator.propose(Command.newBuilder()
                        .setRegisterGroup(RegisterGroupCmd.newBuilder().setTopic(topic).setGroup(group)).build());
        return durable.thenApply(done -> {
            if (!leading) {
                throw new NotLeaderException(replicator.leaderHint());
            }
            Consumer c = hub.register(topic, group, sink);
            LOG.debug("registered {}", c);
            return c;
        });
    }

    /**
     * Acknowledges a tag sent to this consumer. The future completes when the acknowledgement is
     * replicated (a confirmed ACK); callers that did not ask for confirmation ignore it.
     *
     * @throws InvalidRequestException when the tag was not delivered on this consumer's stream
     */
    public CompletableFuture<Void> ack(Consumer c, EventKey tag) {
        requireOwned(c, tag, "ACK");
        metrics.acks.increment();
        String recipient = c.recipient();
        inFlight.markAcked(tag, recipient);
        if (!c.isUniversal()) {
            return deleter.submit(tag, c.group());
        }
        if (store.durableGroups(c.topic()).isEmpty() && inFlight.universalSettled(tag)) {
            return deleter.submit(tag, StateApplier.ALL_GROUPS);
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Makes the message redeliverable at once. */
    public void nack(Consumer c, EventKey tag) {
        requireOwned(c, tag, "NACK");
        metrics.nacks.increment();
        inFlight.release(tag, c.recipient());
        wake();
    }

    /**
     * The consumer's stream ended: it gets nothing more at once, and what it held becomes
     * redeliverable on the pipeline's release thread — never on the caller's (a transport thread),
     * and in O(the consumer's own in-flight messages).
     */
    public void disconnect(Consumer c) {
        if (!hub.unregister(c)) {
            return;
        }
        try {
            releases.execute(() -> release(c));
        } catch (RejectedExecutionException e) {
            LOG.debug("{} disconnected while the engine stops; nothing to release", c);
        }
    }

    private void release(Consumer c) {
        List<EventKey> released = inFlight.releaseConsumer(c);
        LOG.debug("{} disconnected, released {} in-flight messages", c, released.size());
        if (c.isUniversal() && store.durableGroups(c.topic()).isEmpty()) {
            for (EventKey key : released) {
                if (inFlight.universalSettled(key)) {
                    deleter.submit(key, StateApplier.ALL_GROUPS);
                }
            }
        }
        wake();
    }

    private void requireOwned(Consumer c, EventKey tag, String what) {
        if (!c.takeTag(tag)) {
            throw new InvalidRequestException(what + " for tag " + tag.toHex()
                    + ": no such message was delivered on this stream (unknown, already acknowledged, or sent to another consumer)");
        }
    }

    @Override
    public void onApplied(ApplyResult result) {
        for (ApplyResult.Receipt r : result.receipts()) {
            inFlight.clearRecipient(r.key(), "g:" + r.group());
        }
        if (!result.deleted().isEmpty()) {
            var consumers = hub.consumers(); // one copy per entry, not one per deleted key
            for (EventKey key : result.deleted()) {
                inFlight.clearMessage(key);
                for (Consumer c : consumers) {
                    c.forgetTag(key);
                }
            }
        }
        if (result.duePublished()) {
            wake();
        }
    }

    private void wake() {
        dispatcher.wake();
    }

    /** Runs one dispatcher pass now (tests); returns the deliveries made. */
    public int dispatchOnce() {
        return leading ? dispatcher.pass() : 0;
    }

    /** Proposes every queued deletion now; the future completes when all batches have been answered. */
    public CompletableFuture<Void> flushDeletes() {
        if (!leading) {
            return CompletableFuture.completedFuture(null);
        }
        List<CompletableFuture<Void>> batches = deleter.flush();
        return CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new))
                .exceptionally(e -> null);
    }

    /** Queues for deletion every message whose TTL has passed, with or without consumers; returns how many. */
    public int sweepExpired() {
        if (!leading) {
            return 0;
        }
        int[] n = {0};
        store.scanExpired(clock.millis(), key -> {
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
    }

    private void flushQuietly() {
        try {
            flushDeletes();
        } catch (RuntimeException e) {
            LOG.error("delete flush failed", e);
        }
    }

    private void sweepQuietly() {
        try {
            sweepExpired();
        } catch (RuntimeException e) {
            LOG.error("TTL sweep failed", e);
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

    public int queuedDeletions() {
        return deleter.queued();
    }

    @Override
    public synchronized void close() {
        setLeading(false);
        dispatcher.stop();
        if (timers != null) {
            timers.shutdownNow();
        }
        if (releaseThread != null) {
            releaseThread.shutdown();
        }
        if (dispatcherThread != null) {
            try {
                dispatcherThread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
