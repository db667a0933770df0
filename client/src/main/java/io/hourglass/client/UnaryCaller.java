package io.hourglass.client;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
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
 * Sends one unary request of a leader-only service ({@code Rooms}; {@code Broker/Cancel}), retrying on {@code UNAVAILABLE} with backoff until the
 * {@link RetryPolicy} deadline, as {@link PublishCaller} does for publishes. A refusal that names
 * the leader ({@code hourglass-leader} trailer) moves the pool to that server, and the first such
 * redirect is retried at once.
 *
 * <p>Thread-safe. Results complete on a gRPC callback thread or the timer thread; callers must
 * not block in dependent stages. After {@link #close} no retry is started and
 * {@link #failPending} fails whatever is still outstanding.
 */
final class UnaryCaller<S extends io.grpc.stub.AbstractStub<S>> {
    private static final Logger LOG = LoggerFactory.getLogger(UnaryCaller.class);
    private static final long MIN_ATTEMPT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** Starts one attempt of a unary call on {@code stub}. */
    @FunctionalInterface
    interface Rpc<S, Q, R> {
        void invoke(S stub, Q request, StreamObserver<R> observer);
    }

    private final ServerPool pool;
    private final java.util.function.Function<io.grpc.Channel, S> stubs;
    private final RetryPolicy retry;
    private final Duration callTimeout;
    private final ScheduledExecutorService timer;
    private final Set<CompletableFuture<?>> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** @param stubs makes the service's async stub on a server's channel */
    UnaryCaller(ServerPool pool, java.util.function.Function<io.grpc.Channel, S> stubs, RetryPolicy retry,
                Duration callTimeout, ScheduledExecutorService timer) {
        this.pool = pool;
        this.stubs = stubs;
        this.retry = retry;
        this.callTimeout = callTimeout;
        this.timer = timer;
    }

    /**
     * Calls {@code rpc} until it answers, fails with a status other than {@code UNAVAILABLE}, or
     * the retry deadline passes. Never throws; every failure is an
     * {@link HourglassClientException} in the future.
     *
     * @param what the operation, for error messages ("send to room r")
     */
    <Q, R> CompletableFuture<R> call(String what, Q request, Rpc<S, Q, R> rpc) {
        CompletableFuture<R> result = new CompletableFuture<>();
        if (closed) {
            result.completeExceptionally(new HourglassClientException("client is closed"));
            return result;
        }
        pending.add(result);
        result.whenComplete((r, e) -> pending.remove(result));
        long deadline = System.nanoTime() + retry.deadline().toNanos();
        attempt(new Attempt<>(what, request, rpc, deadline, result), 1);
        return result;
    }

    private <Q, R> void attempt(Attempt<S, Q, R> call, int attempt) {
        if (call.result().isDone()) {
            return;
        }
        ServerPool.Endpoint endpoint = pool.current();
        S stub = stubs.apply(endpoint.channel())
                .withDeadlineAfter(callTimeout.toNanos(), TimeUnit.NANOSECONDS);
        call.rpc().invoke(stub, call.request(), new StreamObserver<>() {
            @Override
            public void onNext(R response) {
                call.result().complete(response);
            }

            @Override
            public void onError(Throwable t) {
                Metadata trailers = Status.trailersFromThrowable(t);
                String hint = trailers == null ? null : trailers.get(ConsumerStream.LEADER_KEY);
                onFailure(call, attempt, endpoint, Status.fromThrowable(t), hint);
            }

            @Override
            public void onCompleted() {
                call.result().completeExceptionally(new HourglassClientException(
                        "server " + endpoint.address() + " sent no answer to " + call.what()));
            }
        });
    }

    private <Q, R> void onFailure(Attempt<S, Q, R> call, int attempt, ServerPool.Endpoint endpoint,
                                  Status status, String leaderHint) {
        if (!StatusMapping.isRetryable(status) || closed) {
            call.result().completeExceptionally(StatusMapping.toException(status, endpoint.address()));
            return;
        }
        boolean redirected = pool.failover(endpoint, leaderHint);
        Duration wait = redirected && attempt == 1 ? Duration.ZERO : retry.backoff(attempt);
        if (System.nanoTime() + wait.toNanos() + MIN_ATTEMPT_NANOS - call.deadline() > 0) {
            String description = StatusMapping.describe(status);
            call.result().completeExceptionally(new UnavailableException(call.what()
                    + ": no server available within " + retry.deadline().toMillis()
                    + " ms (last error from " + endpoint.address() + ": " + description + ")",
                    description, status.asRuntimeException()));
            return;
        }
        LOG.debug("{}: attempt {} on {} failed ({}); retrying in {} ms", call.what(), attempt,
                endpoint.address(), status, wait.toMillis());
        try {
            timer.schedule(() -> attempt(call, attempt + 1), wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            call.result().completeExceptionally(new HourglassClientException("client is closed", e));
        }
    }

    /** Stops starting retries; outstanding calls finish or fail on their own. */
    void close() {
        closed = true;
    }

    /** Fails every outstanding call with {@code cause}. */
    void failPending(HourglassClientException cause) {
        for (CompletableFuture<?> future : pending) {
            future.completeExceptionally(cause);
        }
    }

    /** One logical call across its attempts. */
    private record Attempt<S, Q, R>(String what, Q request, Rpc<S, Q, R> rpc, long deadline,
                                 CompletableFuture<R> result) {
    }
}
