package io.hourglass.client;

import java.time.Duration;
import java.util.Objects;

/**
 * How a {@link RoomSession} behaves. Start from {@link #of(RoomHandler)} and adjust with the
 * {@code with…} methods.
 *
 * @param handler receives the session's messages and events
 * @param clientTimeout the session's heartbeat timeout: a SYNC member not heard from for this long
 *     is evicted; at least 1 s; null = the server's {@code rooms.clientTimeout} (default)
 * @param pingInterval how often the session pings; null = a third of the client timeout the
 *     server granted (default), so two pings may be lost before an eviction
 * @param initialBackoff wait before the first reconnect (default 100 ms), doubling per failure
 * @param maxBackoff upper bound of one reconnect wait (default 1 s)
 * @param giveUpAfter end the session with {@link UnavailableException} after this long without a
 *     working stream; zero = never give up (default)
 * @param closeTimeout how long {@link RoomSession#close()} waits for the running handler call and
 *     for the server to end the stream (default 5 s)
 */
public record RoomSessionOptions(RoomHandler handler, Duration clientTimeout, Duration pingInterval,
                                 Duration initialBackoff, Duration maxBackoff,
                                 Duration giveUpAfter, Duration closeTimeout) {
    /** The smallest client timeout a server accepts (ROOMS.md). */
    public static final Duration MIN_CLIENT_TIMEOUT = Duration.ofSeconds(1);

    public RoomSessionOptions {
        Objects.requireNonNull(handler, "handler");
        if (clientTimeout != null && clientTimeout.compareTo(MIN_CLIENT_TIMEOUT) < 0) {
            throw new IllegalArgumentException("clientTimeout must be at least 1s, got "
                    + clientTimeout.toMillis() + "ms");
        }
        if (pingInterval != null) {
            RetryPolicy.requirePositive(pingInterval, "pingInterval");
        }
        RetryPolicy.requirePositive(initialBackoff, "initialBackoff");
        RetryPolicy.requirePositive(maxBackoff, "maxBackoff");
        if (giveUpAfter == null || giveUpAfter.isNegative()) {
            throw new IllegalArgumentException("giveUpAfter must not be negative: " + giveUpAfter);
        }
        if (closeTimeout == null || closeTimeout.isNegative()) {
            throw new IllegalArgumentException("closeTimeout must not be negative: " + closeTimeout);
        }
    }

    /** The defaults, with {@code handler}. */
    public static RoomSessionOptions of(RoomHandler handler) {
        return new RoomSessionOptions(handler, null, null, Duration.ofMillis(100),
                Duration.ofSeconds(1), Duration.ZERO, Duration.ofSeconds(5));
    }

    /** The ping interval for a session granted {@code granted} as its client timeout. */
    Duration pingIntervalFor(Duration granted) {
        if (pingInterval != null) {
            return pingInterval;
        }
        Duration third = granted.dividedBy(3);
        return third.isZero() ? Duration.ofMillis(1) : third;
    }

    public RoomSessionOptions withClientTimeout(Duration value) {
        return new RoomSessionOptions(handler, value, pingInterval, initialBackoff, maxBackoff,
                giveUpAfter, closeTimeout);
    }

    public RoomSessionOptions withPingInterval(Duration value) {
        return new RoomSessionOptions(handler, clientTimeout, value, initialBackoff, maxBackoff,
                giveUpAfter, closeTimeout);
    }

    public RoomSessionOptions withBackoff(Duration initial, Duration max) {
        return new RoomSessionOptions(handler, clientTimeout, pingInterval, initial, max,
                giveUpAfter, closeTimeout);
    }

    public RoomSessionOptions withGiveUpAfter(Duration value) {
        return new RoomSessionOptions(handler, clientTimeout, pingInterval, initialBackoff,
                maxBackoff, value, closeTimeout);
    }

    public RoomSessionOptions withCloseTimeout(Duration value) {
        return new RoomSessionOptions(handler, clientTimeout, pingInterval, initialBackoff,
                maxBackoff, giveUpAfter, value);
    }
}
