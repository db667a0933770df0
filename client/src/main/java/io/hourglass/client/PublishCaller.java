package io.hourglass.client;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.PublishResponse;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends one {@code Publish} request, retrying on {@code UNAVAILABLE} with backoff and failing
 * over between servers until the {@link RetryPolicy} deadline.
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
    private final Set<CompletableFuture<PublishResponse>> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    PublishCaller(ServerPool pool, RetryPolicy retry, Duration callTimeout,
                  ScheduledExecutorService timer) {
        this.pool = pool;
        this.retry = retry;
        this.callTimeout = callTimeout;
        this.timer = timer;
    }

    /** Never throws; every failure is an {@link HourglassClientException} in the future. */
    CompletableFuture<PublishResponse> call(PublishRequest request) {
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
        ServerPool.Endpoint endpoint = pool.current();
        // Every attempt gets the whole call timeout, even near the retry deadline: the server
        // needs its own request timeout to say why it cannot commit, and that answer is the
        // useful one (a truncated attempt would only report DEADLINE_EXCEEDED).
        long timeout = callTimeout.toNanos();
        BrokerGrpc.newStub(endpoint.channel())
                .withDeadlineAfter(timeout, TimeUnit.NANOSECONDS)
                .publish(request, new StreamObserver<>() {
                    @Override
                    public void onNext(PublishResponse response) {
                        result.complete(response);
                    }

                    @Override
                    public void onError(Throwable t) {
                        onFailure(Status.fromThrowable(t), endpoint, request, attempt, deadline,
                                result);
                    }

                    @Override
                    public void onCompleted() {
                        result.completeExceptionally(new HourglassClientException(
                                "server " + endpoint.address() + " sent no publish response"));
                    }
                });
    }

    private void onFailure(Status status, ServerPool.Endpoint endpoint, PublishRequest request,
                           int attempt, long deadline, CompletableFuture<PublishResponse> result) {
        if (!StatusMapping.isRetryable(status) || closed) {
            result.completeExceptionally(StatusMapping.toException(status, endpoint.address()));
            return;
        }
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
        try {
            timer.schedule(() -> attempt(request, attempt + 1, deadline, result),
                    wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new HourglassClientException("client is closed", e));
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
