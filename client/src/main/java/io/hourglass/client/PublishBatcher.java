package io.hourglass.client;

import com.google.protobuf.CodedOutputStream;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.PublishResponse;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Groups messages into {@code Publish} requests and keeps at most
 * {@link PublishConfig#maxInFlightBatches()} of them outstanding.
 *
 * <pre>
 *  add() ──▶ open batch ──(full | linger | nothing outstanding)──▶ ready queue ──(in-flight slot)──▶ sender
 *  addAll() ──(chunked)─────────────────────▶ ready queue
 * </pre>
 *
 * <p>Batches grow while they wait: a batch whose linger ran out while every in-flight slot is
 * taken stays open and keeps taking messages (up to the size limits) until a slot frees, instead
 * of being sealed small and queued behind the others. At 1 000 msg/s with 2 ms of linger and slow
 * commits that is the difference between a few full requests and ~500 tiny ones a second queueing
 * without bound.
 *
 * <p>Thread-safe: the open batch, the ready queue and the in-flight count are guarded by
 * {@code lock}; requests are sent outside it. A batch the server refuses as invalid is re-sent
 * message by message so that only the bad message fails (a refused request was not applied,
 * so this cannot duplicate anything).
 */
final class PublishBatcher {
    private static final Logger LOG = LoggerFactory.getLogger(PublishBatcher.class);
    /**
     * One batch may go out past {@link PublishConfig#maxInFlightBatches()} once every in-flight
     * batch has waited this long: during a failover nothing comes back, and the messages behind
     * the stuck requests would otherwise wait for them to come back before even being sent; sent,
     * they wait on the server for the same new leader and commit with them. At most one extra, so
     * the bound on outstanding requests holds but for one; never with a limit of 1, which keeps
     * requests in order (one at a time).
     */
    static final long STUCK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private record Pending(PublishMessage message, int size, CompletableFuture<PublishResult> result) {
    }

    private final PublishConfig config;
    private final Function<PublishRequest, CompletableFuture<PublishResponse>> sender;
    /** A batch's message positions grouped by shard, or null to send it as one request. */
    private final Function<PublishRequest, List<List<Integer>>> splitter;
    private final ScheduledExecutorService timer;
    /** Every result not yet completed, so that close can wait for or fail them. */
    private final Set<CompletableFuture<PublishResult>> unsettled = ConcurrentHashMap.newKeySet();

    private final Object lock = new Object();
    // Guarded by lock.
    private List<Pending> open = new ArrayList<>();
    private int openBytes;
    private ScheduledFuture<?> lingerTask;
    /** The open batch has waited its linger and goes out with the next free slot. */
    private boolean lingerDone;
    private final ArrayDeque<List<Pending>> ready = new ArrayDeque<>();
    private int inFlight;
    /** When each in-flight batch was sent (System.nanoTime()). */
    private final java.util.Map<List<Pending>, Long> sentAt = new java.util.IdentityHashMap<>();
    private final long stuckNanos;
    /** A drain scheduled for when the in-flight batches count as stuck. */
    private ScheduledFuture<?> stuckCheck;
    private boolean draining;
    private boolean closed;

    PublishBatcher(PublishConfig config,
                   Function<PublishRequest, CompletableFuture<PublishResponse>> sender,
                   ScheduledExecutorService timer) {
        this(config, sender, timer, STUCK_NANOS, request -> null);
    }

    /** @param splitter a batch's message positions by shard, or null to send it whole ({@link ShardMap#split}) */
    PublishBatcher(PublishConfig config,
                   Function<PublishRequest, CompletableFuture<PublishResponse>> sender,
                   ScheduledExecutorService timer, Function<PublishRequest, List<List<Integer>>> splitter) {
        this(config, sender, timer, STUCK_NANOS, splitter);
    }

    /** @param stuckNanos see {@link #STUCK_NANOS} (tests) */
    PublishBatcher(PublishConfig config,
                   Function<PublishRequest, CompletableFuture<PublishResponse>> sender,
                   ScheduledExecutorService timer, long stuckNanos) {
        this(config, sender, timer, stuckNanos, request -> null);
    }

    private PublishBatcher(PublishConfig config,
                           Function<PublishRequest, CompletableFuture<PublishResponse>> sender,
                           ScheduledExecutorService timer, long stuckNanos,
                           Function<PublishRequest, List<List<Integer>>> splitter) {
        this.splitter = splitter;
        this.stuckNanos = stuckNanos;
        this.config = config;
        this.sender = sender;
        this.timer = timer;
    }

    /** Adds one message to the open batch. */
    CompletableFuture<PublishResult> add(PublishMessage message) {
        Pending pending = track(message);
        synchronized (lock) {
            if (closed) {
                failClosed(List.of(pending));
                return pending.result();
            }
            if (!open.isEmpty() && openBytes + pending.size() > config.maxBatchBytes()) {
                sealOpen();
            }
            open.add(pending);
            openBytes += pending.size();
            if (open.size() >= config.maxBatchMessages() || openBytes >= config.maxBatchBytes()
                    || config.linger().isZero() || nothingOutstanding()) {
                sealOpen();
            } else if (open.size() == 1) {
                scheduleLinger(open);
            }
        }
        drain();
        return pending.result();
    }

    /**
     * No request is out and none waits: the open batch has nobody to share a request with, so it
     * goes now instead of adding the linger to its latency (see {@link PublishConfig}). Caller
     * holds lock.
     */
    private boolean nothingOutstanding() {
        return inFlight == 0 && ready.isEmpty() && !draining;
    }

    /** Sends {@code messages} in as few requests as the limits allow, bypassing the linger. */
    CompletableFuture<List<PublishResult>> addAll(List<PublishMessage> messages) {
        List<Pending> all = new ArrayList<>(messages.size());
        for (PublishMessage message : messages) {
            all.add(track(message));
        }
        synchronized (lock) {
            if (closed) {
                return CompletableFuture.failedFuture(failClosed(all));
            }
            List<Pending> chunk = new ArrayList<>();
            int bytes = 0;
            for (Pending pending : all) {
                if (!chunk.isEmpty() && (chunk.size() >= config.maxBatchMessages()
                        || bytes + pending.size() > config.maxBatchBytes())) {
                    ready.add(chunk);
                    chunk = new ArrayList<>();
                    bytes = 0;
                }
                chunk.add(pending);
                bytes += pending.size();
            }
            if (!chunk.isEmpty()) {
                ready.add(chunk);
            }
        }
        drain();
        CompletableFuture<?>[] results = all.stream().map(Pending::result)
                .toArray(CompletableFuture<?>[]::new);
        return CompletableFuture.allOf(results)
                .thenApply(v -> all.stream().map(p -> p.result().join()).toList());
    }

    /** True while the open batch has waited out its linger and waits for a free slot (tests). */
    boolean openBatchWaitsForSlot() {
        synchronized (lock) {
            return lingerDone && !open.isEmpty();
        }
    }

    /** Sends the open batch now. */
    void flush() {
        synchronized (lock) {
            sealOpen();
        }
        drain();
    }

    /** Stops accepting messages and sends the open batch; returns when all results are settled. */
    CompletableFuture<Void> close() {
        synchronized (lock) {
            closed = true;
            sealOpen();
        }
        drain();
        return CompletableFuture.allOf(unsettled.toArray(new CompletableFuture<?>[0]))
                .handle((v, e) -> null);
    }

    /** Fails every result not settled yet; used when the close grace has run out. */
    void failUnsettled(HourglassClientException cause) {
        synchronized (lock) {
            ready.clear();
            open = new ArrayList<>();
        }
        for (CompletableFuture<PublishResult> result : unsettled) {
            result.completeExceptionally(cause);
        }
    }

    private Pending track(PublishMessage message) {
        CompletableFuture<PublishResult> result = new CompletableFuture<>();
        unsettled.add(result);
        result.whenComplete((r, e) -> unsettled.remove(result));
        return new Pending(message, CodedOutputStream.computeMessageSize(1, message), result);
    }

    private static HourglassClientException failClosed(List<Pending> pendings) {
        HourglassClientException e = new HourglassClientException("client is closed");
        pendings.forEach(p -> p.result().completeExceptionally(e));
        return e;
    }

    private void scheduleLinger(List<Pending> batch) {
        try {
            lingerTask = timer.schedule(() -> {
                synchronized (lock) {
                    if (open == batch) {
                        lingerTask = null;
                        if (inFlight < config.maxInFlightBatches() && ready.isEmpty()) {
                            sealOpen();
                        } else {
                            lingerDone = true; // no slot now: keep growing until drain finds one
                        }
                    }
                }
                drain();
            }, config.linger().toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            sealOpen();
        }
    }

    /** Moves the open batch to the ready queue. Caller holds lock. */
    private void sealOpen() {
        lingerDone = false;
        if (lingerTask != null) {
            lingerTask.cancel(false);
            lingerTask = null;
        }
        if (!open.isEmpty()) {
            ready.add(open);
            open = new ArrayList<>();
            openBytes = 0;
        }
    }

    /**
     * Sends ready batches while in-flight slots are free. Re-entrant calls (a send that
     * completes synchronously) return at once; the draining thread picks their work up, so the
     * stack stays flat.
     */
    private void drain() {
        synchronized (lock) {
            if (draining) {
                return;
            }
            draining = true;
        }
        while (true) {
            List<List<Pending>> toSend = new ArrayList<>();
            synchronized (lock) {
                long now = System.nanoTime();
                while (slotFree(now)) {
                    if (ready.isEmpty() && lingerDone) {
                        sealOpen();
                    }
                    if (ready.isEmpty()) {
                        break;
                    }
                    List<Pending> batch = ready.poll();
                    toSend.add(batch);
                    sentAt.put(batch, now);
                    inFlight++;
                }
                if (toSend.isEmpty()) {
                    draining = false;
                    scheduleStuckCheck(now);
                    return;
                }
            }
            for (List<Pending> batch : toSend) {
                CompletableFuture<Void> sending = send(batch);
                synchronized (lock) {
                    // A batch counts as waiting from when it was handed to the sender, not from when
                    // this loop chose it: on a busy machine this thread may be descheduled in between.
                    sentAt.computeIfPresent(batch, (b, at) -> System.nanoTime());
                }
                sending.whenComplete((v, e) -> {
                    synchronized (lock) {
                        inFlight--;
                        sentAt.remove(batch);
                    }
                    drain();
                });
            }
        }
    }

    /** Whether another batch may go out now (see {@link #STUCK_NANOS}). Caller holds lock. */
    private boolean slotFree(long now) {
        int max = config.maxInFlightBatches();
        if (inFlight < max) {
            return true;
        }
        // A limit of 1 is a promise of order (one request at a time: --in-order): never past it.
        return max > 1 && inFlight == max && !sentAt.isEmpty()
                && now - java.util.Collections.max(sentAt.values()) >= stuckNanos;
    }

    /** Drains again once the in-flight batches count as stuck, if messages wait for a slot. Caller holds lock. */
    private void scheduleStuckCheck(long now) {
        if (stuckNanos == Long.MAX_VALUE || config.maxInFlightBatches() < 2 || stuckCheck != null || closed || inFlight != config.maxInFlightBatches() || sentAt.isEmpty()
                || ready.isEmpty() && !lingerDone) {
            return;
        }
        long delay = java.util.Collections.max(sentAt.values()) + stuckNanos - now;
        try {
            stuckCheck = timer.schedule(() -> {
                synchronized (lock) {
                    stuckCheck = null;
                }
                drain();
            }, Math.max(0, delay), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /**
     * Sends one batch; the returned future completes once every result in it is settled. A batch
     * whose messages lie on several shards goes as one request per shard ({@link #splitter}), each to
     * its shard's leader, each refused or stored on its own.
     */
    private CompletableFuture<Void> send(List<Pending> batch) {
        PublishRequest.Builder builder = PublishRequest.newBuilder();
        batch.forEach(p -> builder.addMessages(p.message()));
        PublishRequest request = builder.build();
        List<List<Integer>> byShard = batch.size() > 1 ? splitter.apply(request) : null;
        if (byShard != null) {
            return CompletableFuture.allOf(byShard.stream()
                    .map(positions -> send(positions.stream().map(batch::get).toList()))
                    .toArray(CompletableFuture<?>[]::new));
        }
        return safeSend(request).handle((response, error) -> {
            if (error == null) {
                settle(batch, response);
                return CompletableFuture.<Void>completedFuture(null);
            }
            Throwable cause = unwrap(error);
            if (cause instanceof InvalidRequestException && batch.size() > 1) {
                LOG.debug("batch of {} refused ({}); re-sending one by one", batch.size(),
                        cause.getMessage());
                return CompletableFuture.allOf(batch.stream().map(p -> send(List.of(p)))
                        .toArray(CompletableFuture<?>[]::new));
            }
            batch.forEach(p -> p.result().completeExceptionally(cause));
            return CompletableFuture.<Void>completedFuture(null);
        }).thenCompose(f -> f);
    }

    private CompletableFuture<PublishResponse> safeSend(PublishRequest request) {
        try {
            return sender.apply(request);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new HourglassClientException(
                    "publish failed: " + e.getMessage(), e));
        }
    }

    private static void settle(List<Pending> batch, PublishResponse response) {
        if (response.getMessagesCount() != batch.size()) {
            HourglassClientException e = new HourglassClientException("server answered "
                    + response.getMessagesCount() + " ids for " + batch.size() + " messages");
            batch.forEach(p -> p.result().completeExceptionally(e));
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            try {
                batch.get(i).result().complete(ProtoCodec.fromProto(response.getMessages(i)));
            } catch (IllegalArgumentException e) {
                batch.get(i).result().completeExceptionally(
                        new HourglassClientException("bad publish response: " + e.getMessage(), e));
            }
        }
    }

    static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
