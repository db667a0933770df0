package io.hourglass.server.admin;

import io.grpc.stub.StreamObserver;
import io.hourglass.core.UnavailableException;
import io.hourglass.raft.RaftNode;
import io.hourglass.server.grpc.StatusMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Runs an admin call where a shard's leader is: here when this node leads, else forwarded to the
 * leader. While no leader is known (an election, or this node elected and still applying: ~100 ms)
 * the call asks again every {@link #POLL_MS} for up to the election wait, on a timer, so that no call
 * thread is parked meanwhile; a retry runs on the call pool.
 */
final class LeaderCalls {
    static final long POLL_MS = 20;

    /** A call that may meet Raft's checked {@link IOException}. */
    @FunctionalInterface
    interface RaftCall<T> {
        T call() throws IOException;
    }

    private final ScheduledExecutorService timer;
    private final Executor calls;
    private final Duration electionWait;

    LeaderCalls(ScheduledExecutorService timer, Executor calls, Duration electionWait) {
        this.timer = timer;
        this.calls = calls;
        this.electionWait = electionWait;
    }

    /**
     * On the call's own thread: what the call throws escapes to the interceptor that maps it to a
     * status; on a retry it is sent as the call's status here.
     *
     * @param forward the call forwarded to the leader at the given client address
     */
    <T> void run(StreamObserver<T> out, RaftNode raft, Function<String, RaftCall<T>> forward, RaftCall<T> local) {
        attempt(out, raft, forward, local, System.nanoTime() + electionWait.toNanos());
    }

    private <T> void attempt(StreamObserver<T> out, RaftNode raft, Function<String, RaftCall<T>> forward,
                             RaftCall<T> local, long giveUpAt) {
        if (raft.isLeader()) {
            answer(out, local);
            return;
        }
        String leader = raft.leaderHint();
        if (leader != null) {
            answer(out, forward.apply(leader));
            return;
        }
        if (System.nanoTime() < giveUpAt && later(() -> retry(out, raft, forward, local, giveUpAt))) {
            return;
        }
        throw new UnavailableException("no leader right now: the cluster may have no quorum", null);
    }

    private <T> void retry(StreamObserver<T> out, RaftNode raft, Function<String, RaftCall<T>> forward,
                           RaftCall<T> local, long giveUpAt) {
        try {
            attempt(out, raft, forward, local, giveUpAt);
        } catch (RuntimeException e) {
            out.onError(StatusMapper.toStatus(e));
        }
    }

    /** Schedules {@code task} on the call pool after one poll; false when the node is stopping. */
    private boolean later(Runnable task) {
        try {
            timer.schedule(() -> {
                try {
                    calls.execute(task);
                } catch (RejectedExecutionException e) {
                    task.run(); // stopping: answer from the timer rather than leave the call open
                }
            }, POLL_MS, TimeUnit.MILLISECONDS);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /**
     * Answers with what {@code call} returns. What it throws escapes to the caller; Raft's checked
     * IOException (a local fault, not the request's) escapes unchecked, as INTERNAL.
     */
    static <T> void answer(StreamObserver<T> out, RaftCall<T> call) {
        T reply;
        try {
            reply = call.call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        out.onNext(reply);
        out.onCompleted();
    }
}
