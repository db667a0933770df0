package io.hourglass.client;

import java.time.Duration;

/**
 * How a {@link Subscription} behaves.
 *
 * @param autoReconnect re-open the stream (re-sending {@code init}) when it fails (default on)
 * @param initialBackoff wait before the first reconnect (default 100 ms); doubles per failure
 * @param maxBackoff upper bound of one reconnect wait (default 1 s: a failover takes a few seconds and
 *        reconnecting is cheap, so a consumer should not sleep through the new leader's first seconds)
 * @param giveUpAfter end the subscription with {@link UnavailableException} after this long
 *     without a working stream (counted from subscribing or from the last failure of a stream
 *     that had been accepted); zero = never give up (default)
 * @param maxBuffered deliveries the server may send ahead of the handler (default 128); from 16 on, the
 *        server may send up to an eighth of them in one frame when several are ready at once
 * @param closeTimeout how long {@link Subscription#close()} waits for the running handler call
 *     and for the server to end the stream before cancelling it (default 5 s)
 */
public record SubscribeOptions(boolean autoReconnect, Duration initialBackoff, Duration maxBackoff,
                               Duration giveUpAfter, int maxBuffered, Duration closeTimeout) {
    public static final SubscribeOptions DEFAULT = new SubscribeOptions(true,
            Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ZERO, 128, Duration.ofSeconds(5));

    public SubscribeOptions {
        RetryPolicy.requirePositive(initialBackoff, "initialBackoff");
        RetryPolicy.requirePositive(maxBackoff, "maxBackoff");
        if (giveUpAfter == null || giveUpAfter.isNegative()) {
            throw new IllegalArgumentException("giveUpAfter must not be negative: " + giveUpAfter);
        }
        if (maxBuffered < 1) {
            throw new IllegalArgumentException("maxBuffered must be >= 1: " + maxBuffered);
        }
        if (closeTimeout == null || closeTimeout.isNegative()) {
            throw new IllegalArgumentException("closeTimeout must not be negative: " + closeTimeout);
        }
    }

    public SubscribeOptions withAutoReconnect(boolean value) {
        return new SubscribeOptions(value, initialBackoff, maxBackoff, giveUpAfter, maxBuffered,
                closeTimeout);
    }

    public SubscribeOptions withBackoff(Duration initial, Duration max) {
        return new SubscribeOptions(autoReconnect, initial, max, giveUpAfter, maxBuffered,
                closeTimeout);
    }

    public SubscribeOptions withGiveUpAfter(Duration value) {
        return new SubscribeOptions(autoReconnect, initialBackoff, maxBackoff, value, maxBuffered,
                closeTimeout);
    }

    public SubscribeOptions withMaxBuffered(int value) {
        return new SubscribeOptions(autoReconnect, initialBackoff, maxBackoff, giveUpAfter, value,
                closeTimeout);
    }

    public SubscribeOptions withCloseTimeout(Duration value) {
        return new SubscribeOptions(autoReconnect, initialBackoff, maxBackoff, giveUpAfter,
                maxBuffered, value);
    }
}
