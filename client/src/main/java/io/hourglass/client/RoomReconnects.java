package io.hourglass.client;

import io.grpc.Status;
import java.time.Duration;

/**
 * When a {@link RoomSession} opens its next stream, and when it gives up.
 *
 * <p>The wait doubles per failure from {@link RoomSessionOptions#initialBackoff()} up to
 * {@link RoomSessionOptions#maxBackoff()}, except that a refusal naming the leader is followed at
 * once the first time. The count restarts once a stream works (a reply or a delivery arrived).
 * The session gives up when {@link RoomSessionOptions#giveUpAfter()} has passed since the last
 * open stream was lost. Not thread-safe: owned by the session's lock.
 */
final class RoomReconnects {
    private final RoomSessionOptions options;
    private final ServerPool pool;
    private int failures;
    /** System.nanoTime() since when no stream has been open. */
    private long downSince = System.nanoTime();

    RoomReconnects(RoomSessionOptions options, ServerPool pool) {
        this.options = options;
        this.pool = pool;
    }

    /** A stream works: the next failure starts the backoff again. */
    void working() {
        failures = 0;
    }

    /** An open stream was lost: the give-up clock starts now. */
    void lostOpenStream() {
        downSince = System.nanoTime();
    }

    /**
     * The wait before the stream after {@code stream}, which ended with {@code status}; moves the
     * pool off a server that is unavailable, to the leader it named if it did.
     *
     * @throws HourglassClientException the failure to end the session with instead
     */
    Duration next(RoomSessionStream stream, Status status) {
        if (!StatusMapping.isReconnectable(status)) {
            throw StatusMapping.toException(status, stream.endpoint().address());
        }
        boolean redirected = status.getCode() == Status.Code.UNAVAILABLE
                && pool.failover(stream.endpoint(), stream.leaderHint());
        failures++;
        Duration wait = redirected && failures == 1 ? Duration.ZERO
                : RetryPolicy.backoff(options.initialBackoff(), options.maxBackoff(), failures);
        long down = System.nanoTime() + wait.toNanos() - downSince;
        if (!options.giveUpAfter().isZero() && down > options.giveUpAfter().toNanos()) {
            String description = StatusMapping.describe(status);
            throw new UnavailableException("no server opened a room session within "
                    + options.giveUpAfter().toMillis() + " ms (last error from "
                    + stream.endpoint().address() + ": " + description + ")", description,
                    status.asRuntimeException());
        }
        return wait;
    }
}
