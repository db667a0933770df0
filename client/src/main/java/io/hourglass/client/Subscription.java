package io.hourglass.client;

import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A consumer of one topic (and group) that stays subscribed across stream failures.
 *
 * <p>Lifecycle: {@code CONNECTING → SUBSCRIBED → (stream fails) → waiting → CONNECTING → …},
 * until {@link #close()}, a non-retryable refusal ({@link InvalidRequestException}), or
 * {@link SubscribeOptions#giveUpAfter()} without a working stream ({@link UnavailableException}).
 * {@link #terminated()} tells which. Every stream starts with a fresh {@code init}; deliveries
 * of an ended stream are neither handled nor acknowledged (the server redelivers them).
 *
 * <p>Thread-safety: all methods may be called from any thread. The stream state is guarded by
 * {@code lock}; handler calls run on the subscription's own thread (see {@link DeliveryHandler}).
 */
public final class Subscription implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Subscription.class);
    /** Longest pause between two subscribe attempts while no server names a leader. */
    static final Duration ELECTION_BACKOFF = Duration.ofMillis(250);
    /**
     * The pause between subscribe attempts while no server names a leader, during the first
     * {@link #ELECTION_WINDOW} of an outage: a failover elects a leader within about 100 ms after a
     * kill and about 1 s after a partition, and each attempt meanwhile costs one refused call.
     */
    static final Duration ELECTION_RETRY = Duration.ofMillis(50);
    /** How long into an outage attempts go every {@link #ELECTION_RETRY}; then the backoff grows. */
    static final Duration ELECTION_WINDOW = Duration.ofSeconds(3);

    private final String topic;
    private final String group;
    private final SubscribeOptions options;
    private final ServerPool pool;
    private final ScheduledExecutorService timer;
    private final StallWatch stallWatch;
    private final HandlerLoop handlerLoop;
    private final Consumer<Subscription> onTerminated;
    private final CompletableFuture<Void> terminated = new CompletableFuture<>();
    private final ConsumerStream.Listener listener = new StreamListener();

    private final Object lock = new Object();
    // Guarded by lock.
    private ConsumerStream current;
    private ScheduledFuture<?> reconnectTask;
    private int failures;
    /** Whether the last failed attempt was sent on to a named leader; guarded by lock. */
    private boolean lastRedirected;
    /** System.nanoTime() since when no stream has been accepted; meaningful while !subscribed. */
    private long downSince;
    private boolean subscribed;
    private boolean closed;
    private volatile String consumerId = "";

    Subscription(String topic, String group, DeliveryHandler handler, SubscribeOptions options,
                 ServerPool pool, ScheduledExecutorService timer, StallWatch stallWatch, String threadName,
                 Consumer<Subscription> onTerminated) {
        this.stallWatch = stallWatch;
        this.topic = topic;
        this.group = group;
        this.options = options;
        this.pool = pool;
        this.timer = timer;
        this.handlerLoop = new HandlerLoop(threadName, handler);
        this.onTerminated = onTerminated;
    }

    void start() {
        synchronized (lock) {
            downSince = System.nanoTime();
        }
        handlerLoop.start();
        connect();
    }

    public String topic() {
        return topic;
    }

    /** The consumer group; empty for a universal consumer. */
    public String group() {
        return group;
    }

    /** The id the server gave the current (or last) stream; empty before the first. */
    public String consumerId() {
        return consumerId;
    }

    /** Whether a stream is open and the server has accepted it. */
    /** Deliveries received and waiting for the handler (tests). */
    int queuedDeliveries() {
        return handlerLoop.queued();
    }

    public boolean isSubscribed() {
        synchronized (lock) {
            return subscribed && !closed;
        }
    }

    /**
     * Completes normally when the subscription was closed (by {@link #close()}, or by the
     * server when reconnecting is off), exceptionally with an {@link HourglassClientException}
     * when it gave up.
     */
    public CompletableFuture<Void> terminated() {
        return terminated;
    }

    /**
     * Stops handling deliveries (waiting for the running handler call unless called from it),
     * half-closes the stream so ACKs already sent are processed, and cancels it if the server
     * has not ended it within {@link SubscribeOptions#closeTimeout()}. Idempotent.
     */
    @Override
    public void close() {
        ConsumerStream stream;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            subscribed = false;
            stream = current;
            current = null;
            if (reconnectTask != null) {
                reconnectTask.cancel(false);
            }
        }
        handlerLoop.stop(options.closeTimeout());
        if (stream != null) {
            stream.halfClose();
            try {
                stream.ended().get(options.closeTimeout().toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                stream.cancel("subscription closed");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                stream.cancel("subscription closed");
            } catch (ExecutionException e) {
                LOG.debug("stream ended with error while closing", e);
            }
        }
        LOG.debug("subscription to {} closed", topic);
        terminated.complete(null);
        onTerminated.accept(this);
    }

    /**
     * Opens the next stream. It is started under {@code lock} so that {@link #close()} never
     * sees a stream whose call does not exist yet; starting a call does not block.
     */
    private void connect() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            reconnectTask = null;
            ConsumerStream stream = new ConsumerStream(pool.current(), options.maxBuffered(), listener,
                    handlerLoop::isHandlerThread);
            current = stream;
            stallWatch.watch(stream);
            LOG.debug("subscribing to {} (group '{}') on {}", topic, group, stream.endpoint().address());
            stream.start(topic, group, options.maxUnacked());
        }
    }

    private void onStreamEnded(ConsumerStream stream, Status status) {
        stallWatch.unwatch(stream);
        HourglassClientException failure;
        synchronized (lock) {
            if (closed || stream != current) {
                return;
            }
            current = null;
            if (subscribed) {
                subscribed = false;
                downSince = System.nanoTime();
            }
            if (options.autoReconnect() && StatusMapping.isReconnectable(status)) {
                failure = scheduleReconnect(stream, status);
                if (failure == null) {
                    return;
                }
            } else {
                failure = status.isOk() ? null : StatusMapping.toException(status, stream.endpoint().address());
            }
        }
        terminate(failure);
    }

    /**
     * The pause before subscribe attempt {@code failures + 1}, {@code downNanos} into an outage.
     * Told where the leader is, the first time or after an attempt that was not itself redirected
     * (a server that knew no leader, then one that names it): at once. Early in an outage (the first
     * {@link #ELECTION_WINDOW}), while no server names a leader or while servers point at one (a
     * failover: the first server asked may still name the old leader, the new one may refuse until
     * it is ready), every {@link #ELECTION_RETRY}: the doubling backoff made a subscriber that was
     * sent around during a failover wait 200-800 ms after the new leader was ready. Later, the
     * doubling backoff.
     */
    static Duration reconnectWait(SubscribeOptions options, int failures, boolean redirected,
                                  boolean redirectedBefore, boolean electing, long downNanos) {
        if (redirected && (failures == 1 || !redirectedBefore)) {
            return Duration.ZERO;
        }
        if ((electing || redirected) && downNanos < ELECTION_WINDOW.toNanos()) {
            return options.initialBackoff().compareTo(ELECTION_RETRY) < 0 ? options.initialBackoff() : ELECTION_RETRY;
        }
        Duration max = electing && options.maxBackoff().compareTo(ELECTION_BACKOFF) > 0 ? ELECTION_BACKOFF
                : options.maxBackoff();
        return RetryPolicy.backoff(options.initialBackoff().compareTo(max) > 0 ? max : options.initialBackoff(), max,
                failures);
    }

    /** Schedules the next stream, or returns why not. Caller holds lock. */
    private HourglassClientException scheduleReconnect(ConsumerStream stream, Status status) {
        boolean redirected = false;
        if (status.getCode() == Status.Code.UNAVAILABLE) {
            redirected = pool.failover(stream.endpoint(), stream.leaderHint());
        }
        failures++;
        // No leader named (an election under way, or a server down): a failover ends within about a
        // second, so ask again often rather than sleep through the new leader's first deliveries.
        // Each attempt costs a refused call or connection, nothing more.
        boolean electing = status.getCode() == Status.Code.UNAVAILABLE && stream.leaderHint() == null
                && !stream.stalledOut();
        Duration wait = reconnectWait(options, failures, redirected, lastRedirected, electing, System.nanoTime() - downSince);
        lastRedirected = redirected; // two servers naming each other alternate at once and ELECTION_RETRY
        long down = System.nanoTime() + wait.toNanos() - downSince;
        if (!options.giveUpAfter().isZero() && down > options.giveUpAfter().toNanos()) {
            String description = StatusMapping.describe(status);
            return new UnavailableException("no server accepted the subscription to " + topic
                    + " within " + options.giveUpAfter().toMillis() + " ms (last error from "
                    + stream.endpoint().address() + ": " + description + ")", description,
                    status.asRuntimeException());
        }
        if (failures == 1) {
            LOG.info("stream to {} for {} ended ({}); reconnecting in {} ms",
                    stream.endpoint().address(), topic, status.getCode(), wait.toMillis());
        } else {
            LOG.debug("subscribe attempt {} on {} for {} failed ({}); again in {} ms", failures,
                    stream.endpoint().address(), topic, status.getCode(), wait.toMillis());
        }
        try {
            reconnectTask = timer.schedule(this::connect, wait.toNanos(), TimeUnit.NANOSECONDS);
            return null;
        } catch (RejectedExecutionException e) {
            return new HourglassClientException("client is closed", e);
        }
    }

    /**
     * Ends the subscription without a stream to close: normally if {@code failure} is null.
     * Caller must not hold lock.
     */
    private void terminate(HourglassClientException failure) {
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            subscribed = false;
            current = null;
        }
        handlerLoop.stop(Duration.ZERO);
        if (failure == null) {
            LOG.info("subscription to {} ended by the server", topic);
            terminated.complete(null);
        } else {
            LOG.warn("subscription to {} ended: {}", topic, failure.getMessage());
            terminated.completeExceptionally(failure);
        }
        onTerminated.accept(this);
    }

    private final class StreamListener implements ConsumerStream.Listener {
        @Override
        public void onSubscribed(ConsumerStream stream, String id) {
            synchronized (lock) {
                if (stream != current) {
                    return;
                }
                subscribed = true;
                failures = 0;
                lastRedirected = false;
            }
            consumerId = id;
            LOG.info("subscribed to {} (group '{}') on {} as {}", topic, group,
                    stream.endpoint().address(), id);
        }

        @Override
        public void onDelivery(ConsumerStream stream, ReceivedMessage message) {
            handlerLoop.submit(new HandlerLoop.Item(stream, message));
        }

        @Override
        public void onEnded(ConsumerStream stream, Status status) {
            onStreamEnded(stream, status);
        }
    }
}
