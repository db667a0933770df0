package io.hourglass.client;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.SecurityGrpc;
import io.hourglass.api.v1.WhoAmIRequest;
import io.hourglass.api.v1.WhoAmIResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Notices a server that stopped answering while its TCP connection stays up (a paused process,
 * {@code SIGSTOP}, a machine that froze), so that calls waiting on it move to another server
 * instead of waiting out their deadline (a publish's 10 s call timeout, a subscription forever).
 *
 * <p>gRPC's own keepalive cannot do it: grpc-java allows a client ping no more often than every
 * 10 s. So, while a call to a server has been waiting longer than half the stall timeout, the
 * watch asks that server a question it answers without Raft ({@code Security/WhoAmI}, open to
 * any caller) with the stall timeout as deadline; one question per server at a time, shared by
 * all its calls. A server that misses the deadline is stalled: its waiting calls are told
 * ({@link Watched#stalled()}) and the pool moves on, passing that server over for
 * {@link #PASS_OVER_TIMEOUTS} stall timeouts. A server that is merely slow to commit
 * (an election, a busy disk) still answers the question, so its calls are left alone.
 *
 * <p>Thread-safe. Checks run on the client's timer.
 */
final class StallWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StallWatch.class);

    /** A call that waits on one server. */
    interface Watched {
        ServerPool.Endpoint endpoint();

        /** System.nanoTime() when the call started waiting. */
        long sinceNanos();

        /** The server stopped answering: give up on it (called at most once, on the timer). */
        void stalled();
    }

    /**
     * A stalled server is passed over for this many stall timeouts: longer than the election that
     * replaces a paused leader takes (1-1.5 s after a 1 s stall verdict here), short enough that a
     * server back from a pause is used again soon.
     */
    static final int PASS_OVER_TIMEOUTS = 3;

    private final ServerPool pool;
    private final long timeoutNanos;
    private final Set<Watched> watched = ConcurrentHashMap.newKeySet();
    /** Guarded by itself: the question under way or last answered, per server index. */
    private final Map<Integer, Probe> probes = new HashMap<>();
    private final AtomicLong stalls = new AtomicLong();
    private final ScheduledFuture<?> sweeper;

    private record Probe(long startNanos, CompletableFuture<Boolean> answered) {
    }

    /** @param timeout how long a server may leave the question unanswered; zero turns the watch off */
    StallWatch(ServerPool pool, Duration timeout, ScheduledExecutorService timer) {
        this.pool = pool;
        this.timeoutNanos = timeout.toNanos();
        if (timeout.isZero()) {
            this.sweeper = null;
            return;
        }
        long every = Math.max(10, timeout.toMillis() / 4);
        ScheduledFuture<?> s;
        try {
            s = timer.scheduleWithFixedDelay(this::sweep, every, every, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closed) {
            s = null;
        }
        this.sweeper = s;
    }

    /** Watches {@code call} until {@link #unwatch}; a no-op when the watch is off. */
    void watch(Watched call) {
        if (sweeper != null) {
            watched.add(call);
        }
    }

    void unwatch(Watched call) {
        watched.remove(call);
    }

    /** Servers found stalled since the client started. */
    long stalls() {
        return stalls.get();
    }

    @Override
    public void close() {
        if (sweeper != null) {
            sweeper.cancel(false);
        }
        watched.clear();
    }

    private void sweep() {
        long now = System.nanoTime();
        Map<ServerPool.Endpoint, List<Watched>> waiting = new HashMap<>();
        for (Watched w : watched) {
            if (now - w.sinceNanos() >= timeoutNanos / 2) {
                waiting.computeIfAbsent(w.endpoint(), e -> new java.util.ArrayList<>()).add(w);
            }
        }
        waiting.forEach((endpoint, calls) -> answers(endpoint, now).thenAccept(alive -> {
            if (!alive) {
                stalled(endpoint, calls);
            }
        }));
    }

    /**
     * The verdict covers every call on the server, not only the ones that were waiting when the
     * question went out: a call made on it since then would otherwise wait for a question of its own.
     */
    private void stalled(ServerPool.Endpoint endpoint, List<Watched> asked) {
        stalls.incrementAndGet();
        Set<Watched> calls = new java.util.LinkedHashSet<>(asked);
        for (Watched w : watched) {
            if (w.endpoint().index() == endpoint.index()) {
                calls.add(w);
            }
        }
        LOG.warn("server {} has not answered for {} ms while its connection stays open: moving {} waiting call(s)"
                + " to another server", endpoint.address(), TimeUnit.NANOSECONDS.toMillis(timeoutNanos), calls.size());
        pool.stalled(endpoint, PASS_OVER_TIMEOUTS * timeoutNanos);
        for (Watched w : calls) {
            if (watched.remove(w)) {
                try {
                    w.stalled();
                } catch (RuntimeException e) {
                    LOG.debug("a stalled call failed to move", e);
                }
            }
        }
    }

    /** Whether {@code endpoint} answered the last question, asking a new one when that is older than half the timeout. */
    private CompletableFuture<Boolean> answers(ServerPool.Endpoint endpoint, long now) {
        Probe probe;
        synchronized (probes) {
            probe = probes.get(endpoint.index());
            boolean fresh = probe != null
                    && (!probe.answered().isDone() || now - probe.startNanos() < timeoutNanos / 2);
            if (fresh) {
                return probe.answered().isDone() ? probe.answered() : new CompletableFuture<>(); // one verdict per question
            }
            probe = new Probe(now, new CompletableFuture<>());
            probes.put(endpoint.index(), probe);
        }
        CompletableFuture<Boolean> answered = probe.answered();
        SecurityGrpc.newStub(endpoint.channel()).withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS)
                .whoAmI(WhoAmIRequest.getDefaultInstance(), new StreamObserver<WhoAmIResponse>() {
                    @Override
                    public void onNext(WhoAmIResponse value) {
                        answered.complete(true);
                    }

                    @Override
                    public void onError(Throwable t) {
                        // Any answer, a refusal included, shows the server is there; only silence does not.
                        Status.Code code = Status.fromThrowable(t).getCode();
                        answered.complete(code != Status.Code.DEADLINE_EXCEEDED && code != Status.Code.UNAVAILABLE);
                    }

                    @Override
                    public void onCompleted() {
                        answered.complete(true);
                    }
                });
        return answered;
    }
}
