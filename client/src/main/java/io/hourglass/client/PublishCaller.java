package io.hourglass.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.PublishResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends one {@code Publish} request, retrying on {@code UNAVAILABLE} with backoff and failing
 * over between servers until the {@link RetryPolicy} deadline. A retry waiting out its backoff is
 * sent at once when another publish of its shard succeeds meanwhile: the cluster serves again (a
 * new leader), and a backoff grown during an election would otherwise hold it for up to
 * {@link RetryPolicy#maxBackoff()} more.
 *
 * <p>Thread-safe. Results complete on a gRPC callback thread or on the timer thread; callers
 * must not block in dependent stages. After {@link #close} no retry is started and
 * {@link #failPending} fails whatever is still outstanding.
 */
final class PublishCaller {
    private static final long MIN_ATTEMPT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private static final Logger LOG = LoggerFactory.getLogger(PublishCaller.class);

    private final ServerPool pool;
    private final RetryPolicy retry;
    private final Duration callTimeout;
    private final ScheduledExecutorService timer;
    private final StallWatch stallWatch;
    /** Where a topic's shard is led; the first attempt of a publish goes there. */
    private final ShardMap shardMap;
    private final Set<CompletableFuture<PublishResponse>> pending = ConcurrentHashMap.newKeySet();
    /** Retries waiting out their backoff. */
    private final Set<WaitingRetry> waiting = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    PublishCaller(ServerPool pool, RetryPolicy retry, Duration callTimeout,
                  ScheduledExecutorService timer, StallWatch stallWatch) {
        this.pool = pool;
        this.shardMap = new ShardMap(pool);
        this.stallWatch = stallWatch;
        this.retry = retry;
        this.callTimeout = callTimeout;
        this.timer = timer;
    }

    /** The shard map the first attempts are routed by (tests). */
    ShardMap shardMap() {
        return shardMap;
    }

    /** Never throws; every failure is an {@link HourglassClientException} in the future. */
    CompletableFuture<PublishResponse> call(PublishRequest request) {
        return callOne(request);
    }

    private CompletableFuture<PublishResponse> callOne(PublishRequest request) {
        CompletableFuture<PublishResponse> result = new CompletableFuture<>();
        if (closed) {
            result.completeExceptionally(new HourglassClientException("client is closed"));
            return result;
        }
        pending.add(result);
        result.whenComplete((r, e) -> pending.remove(result));
        long deadline = System.nanoTime() + retry.deadline().toNanos();
        attempt(request, 1, deadline, result);
        return result;
    }

    private void attempt(PublishRequest request, int attempt, long deadline,
                         CompletableFuture<PublishResponse> result) {
        if (result.isDone()) {
            return;
        }
        // The first attempt to the leader of the batch's shard when known; retries where the pool points.
        ServerPool.Endpoint endpoint = attempt == 1 ? shardMap.route(request) : pool.current();
        // Every attempt gets the whole call timeout, even near the retry deadline: the server
        // needs its own request timeout to say why it cannot commit, and that answer is the
        // useful one (a truncated attempt would only report DEADLINE_EXCEEDED).
        long timeout = callTimeout.toNanos();
        Attempt a = new Attempt(endpoint, request, attempt, deadline, result);
        stallWatch.watch(a);
        BrokerGrpc.newStub(endpoint.channel())
                .withDeadlineAfter(timeout, TimeUnit.NANOSECONDS)
                .publish(request, a);
    }

    /** One attempt on one server; given up when that server stalls ({@link StallWatch}). */
    private final class Attempt implements ClientResponseObserver<PublishRequest, PublishResponse>, StallWatch.Watched {
        private final ServerPool.Endpoint endpoint;
        private final PublishRequest request;
        private final int number;
        private final long deadline;
        private final CompletableFuture<PublishResponse> result;
        private final long sinceNanos = System.nanoTime();
        /** Set once: by the answer, or by the stall that gave this attempt up. */
        private final AtomicBoolean over = new AtomicBoolean();
        private volatile ClientCallStreamObserver<PublishRequest> call;

        Attempt(ServerPool.Endpoint endpoint, PublishRequest request, int number, long deadline,
                CompletableFuture<PublishResponse> result) {
            this.endpoint = endpoint;
            this.request = request;
            this.number = number;
            this.deadline = deadline;
            this.result = result;
        }

        @Override
        public ServerPool.Endpoint endpoint() {
            return endpoint;
        }

        @Override
        public long sinceNanos() {
            return sinceNanos;
        }

        @Override
        public void stalled() {
            if (over.compareAndSet(false, true) && !result.isDone()) {
                ClientCallStreamObserver<PublishRequest> c = call;
                if (c != null) {
                    c.cancel("server " + endpoint.address() + " stopped answering", null);
                }
                // At once to the next server: the request carries its producer id and sequence, so
                // the stalled server committing it too stores it once.
                attempt(request, number + 1, deadline, result);
            }
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<PublishRequest> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(PublishResponse response) {
            result.complete(response); // from any attempt, a stalled one included
            if (!waiting.isEmpty()) {
                wakeRetries(shardMap.shardOf(request));
            }
        }

        @Override
        public void onError(Throwable t) {
            stallWatch.unwatch(this);
            if (over.compareAndSet(false, true)) {
                onFailure(Status.fromThrowable(t), endpoint, request, number, deadline, result);
            }
        }

        @Override
        public void onCompleted() {
            stallWatch.unwatch(this);
            if (over.compareAndSet(false, true) && !result.isDone()) {
                result.completeExceptionally(new HourglassClientException(
                        "server " + endpoint.address() + " sent no publish response"));
            }
        }
    }

    private void onFailure(Status status, ServerPool.Endpoint endpoint, PublishRequest request,
                           int attempt, long deadline, CompletableFuture<PublishResponse> result) {
        if (!StatusMapping.isRetryable(status) || closed) {
            result.completeExceptionally(StatusMapping.toException(status, endpoint.address()));
            return;
        }
        shardMap.stale();
        pool.failover(endpoint);
        Duration wait = retry.backoff(attempt);
        // A retry needs time to get an answer; one that would start at the deadline would only
        // report DEADLINE_EXCEEDED and hide the real cause.
        if (System.nanoTime() + wait.toNanos() + MIN_ATTEMPT_NANOS - deadline > 0) {
            String description = StatusMapping.describe(status);
            result.completeExceptionally(new UnavailableException(
                    "no server available within " + retry.deadline().toMillis() + " ms (last error from "
                            + endpoint.address() + ": " + description + ")",
                    description, status.asRuntimeException()));
            return;
        }
        LOG.debug("publish attempt {} to {} failed ({}); retrying in {} ms", attempt,
                endpoint.address(), status, wait.toMillis());
        WaitingRetry next = new WaitingRetry(request, attempt + 1, deadline, result, shardMap.shardOf(request));
        waiting.add(next);
        try {
            next.timerTask = timer.schedule(next, wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            waiting.remove(next);
            result.completeExceptionally(new HourglassClientException("client is closed", e));
        }
    }

    /** A publish of {@code shard} (-1: unknown) succeeded: the retries waiting for that shard go now. */
    private void wakeRetries(int shard) {
        for (WaitingRetry r : waiting) {
            if (shard < 0 || r.shard < 0 || r.shard == shard) {
                java.util.concurrent.ScheduledFuture<?> task = r.timerTask;
                if (task != null) {
                    task.cancel(false);
                }
                try {
                    timer.execute(r);
                } catch (RejectedExecutionException e) {
                    return; // closed: failPending fails what is left
                }
            }
        }
    }

    /** A retry waiting out its backoff; runs once, when the timer fires or when woken earlier. */
    private final class WaitingRetry implements Runnable {
        private final PublishRequest request;
        private final int attempt;
        private final long deadline;
        private final CompletableFuture<PublishResponse> result;
        private final int shard;
        private final AtomicBoolean started = new AtomicBoolean();
        private volatile java.util.concurrent.ScheduledFuture<?> timerTask;

        WaitingRetry(PublishRequest request, int attempt, long deadline, CompletableFuture<PublishResponse> result,
                     int shard) {
            this.request = request;
            this.attempt = attempt;
            this.deadline = deadline;
            this.result = result;
            this.shard = shard;
        }

        @Override
        public void run() {
            if (started.compareAndSet(false, true)) {
                waiting.remove(this);
                attempt(request, attempt, deadline, result);
            }
        }
    }

    /** Stops starting retries; outstanding calls finish or fail on their own. */
    void close() {
        closed = true;
    }

    /** Fails every outstanding call with {@code cause}. */
    void failPending(HourglassClientException cause) {
        for (CompletableFuture<PublishResponse> future : pending) {
            future.completeExceptionally(cause);
        }
    }

    /** Completes when every call outstanding now has finished. */
    CompletableFuture<Void> idle() {
        return CompletableFuture.allOf(pending.toArray(new CompletableFuture<?>[0]))
                .handle((v, e) -> null);
    }
}
