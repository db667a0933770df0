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
 * @param maxUnacked most deliveries unsettled at once on a stream: received and not yet ACKed or
 *     NACKed (a prefetch limit; default 0, none). The server sends no more until one is settled, so
 *     at most this many are handed out beyond what the handler settled when the subscription closes;
 *     a handler that keeps its {@link DeliveryContext}s to settle later must settle some before this
 *     many are held, or the stream stops. See {@code init.max_unacked} in the API reference.
 */
public record SubscribeOptions(boolean autoReconnect, Duration initialBackoff, Duration maxBackoff,
                               Duration giveUpAfter, int maxBuffered, Duration closeTimeout, int maxUnacked) {
    public static final SubscribeOptions DEFAULT = new SubscribeOptions(true,
            Duration.ofMillis(100), Duration.ofSeconds(1), Duration.ZERO, 128, Duration.ofSeconds(5), 0);

    /** Without a prefetch limit ({@code maxUnacked} 0). */
    public SubscribeOptions(boolean autoReconnect, Duration initialBackoff, Duration maxBackoff,
                            Duration giveUpAfter, int maxBuffered, Duration closeTimeout) {
        this(autoReconnect, initialBackoff, maxBackoff, giveUpAfter, maxBuffered, closeTimeout, 0);
    }

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
        if (maxUnacked < 0) {
            throw new IllegalArgumentException("maxUnacked must be >= 0 (0: no limit): " + maxUnacked);
        }
    }

    public SubscribeOptions withAutoReconnect(boolean value) {
        return new SubscribeOptions(value, initialBackoff, maxBackoff, giveUpAfter, maxBuffered,
                closeTimeout, maxUnacked);
    }

    public SubscribeOptions withBackoff(Duration initial, Duration max) {
        return new SubscribeOptions(autoReconnect, initial, max, giveUpAfter, maxBuffered,
                closeTimeout, maxUnacked);
    }

    public SubscribeOptions withGiveUpAfter(Duration value) {
        return new SubscribeOptions(autoReconnect, initialBackoff, maxBackoff, value, maxBuffered,
                closeTimeout, maxUnacked);
    }

    public SubscribeOptions withMaxBuffered(int value) {
        return new SubscribeOptions(autoReconnect, initialBackoff, maxBackoff, giveUpAfter, value,
                closeTimeout, maxUnacked);
    }

    public SubscribeOptions withCloseTimeout(Duration value) {
        return new SubscribeOptions(autoReconnect, initialBackoff, maxBackoff, giveUpAfter,
                maxBuffered, value, maxUnacked);
    }

    public SubscribeOptions withMaxUnacked(int value) {
        return new SubscribeOptions(autoReconnect, initialBackoff, maxBackoff, giveUpAfter, maxBuffered,
                closeTimeout, value);
    }
}
