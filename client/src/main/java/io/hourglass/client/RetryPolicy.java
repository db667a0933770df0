package io.hourglass.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How long and how fast the client retries a request that failed with {@code UNAVAILABLE}
 * (no leader yet, not the leader, server restarting, connection refused).
 *
 * <p>Attempt {@code n} (1-based) waits {@code min(maxBackoff, initialBackoff · 2^(n-1))} with
 * ±20 % jitter before retrying; the client gives up once the next attempt would start after
 * {@code deadline}, counted from the first attempt.
 *
 * @param initialBackoff wait before the first retry (default 50 ms)
 * @param maxBackoff upper bound of one wait (default 2 s)
 * @param deadline total time budget of one request, retries included (default 30 s)
 */
public record RetryPolicy(Duration initialBackoff, Duration maxBackoff, Duration deadline) {
    public static final RetryPolicy DEFAULT =
            new RetryPolicy(Duration.ofMillis(50), Duration.ofSeconds(2), Duration.ofSeconds(30));

    public RetryPolicy {
        requirePositive(initialBackoff, "initialBackoff");
        requirePositive(maxBackoff, "maxBackoff");
        requirePositive(deadline, "deadline");
        if (maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("maxBackoff must not be below initialBackoff");
        }
    }

    /** The same policy with another total deadline. */
    public RetryPolicy withDeadline(Duration newDeadline) {
        return new RetryPolicy(initialBackoff, maxBackoff, newDeadline);
    }

    /** The wait before retry number {@code attempt} (1 = first retry), jittered. */
    Duration backoff(int attempt) {
        return backoff(initialBackoff, maxBackoff, attempt);
    }

    static Duration backoff(Duration initial, Duration max, int attempt) {
        int doublings = Math.min(Math.max(attempt - 1, 0), 20);
        long base = Math.min(max.toNanos(), initial.toNanos() << doublings);
        double jitter = 0.8 + 0.4 * ThreadLocalRandom.current().nextDouble();
        return Duration.ofNanos(Math.max(1, (long) (base * jitter)));
    }

    static void requirePositive(Duration d, String name) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + " must be positive, got " + d);
        }
    }
}
