package io.hourglass.core.config;

import java.time.Duration;

/**
 * Settings of the lock-step rooms engine (ROOMS.md, DESIGN §6).
 *
 * @param clientTimeout {@code rooms.clientTimeout} (30s, at least 1s): heartbeat timeout of a session
 *        that does not choose its own; a sync member silent for this long is evicted
 * @param housekeepingInterval {@code rooms.housekeepingInterval} (250ms, 1ms to 500ms): how often evictions,
 *        ack deadlines and retries are checked; at most half the shortest allowed client timeout, so an
 *        eviction is never more than {@code clientTimeout/2} late
 * @param resubscribeGrace {@code rooms.resubscribeGrace} (30s, at least 0): after a failover, how long a room
 *        whose replicated backlog survived keeps it while no sync member has resubscribed (without it,
 *        the "no sync members" rule would hand the backlog to async listeners before anyone is back)
 * @param maxAckTimeout {@code rooms.maxAckTimeout} (1h, 1s to 30d): the longest ack timeout {@code room configure}
 *        may give a room; beyond it a hung member would block a room for practically ever, which is what
 *        "no ack timeout" (0) already says explicitly
 */
public record RoomsConfig(Duration clientTimeout, Duration housekeepingInterval, Duration resubscribeGrace,
                          Duration maxAckTimeout) {
    /** The shortest heartbeat timeout a session may choose (ROOMS.md). */
    public static final Duration MIN_CLIENT_TIMEOUT = Duration.ofSeconds(1);
    /** The longest heartbeat timeout a session may choose. */
    public static final Duration MAX_CLIENT_TIMEOUT = Duration.ofDays(1);
    /** The longest housekeeping interval: half of {@link #MIN_CLIENT_TIMEOUT}. */
    public static final Duration MAX_HOUSEKEEPING_INTERVAL = MIN_CLIENT_TIMEOUT.dividedBy(2);
    /** The bounds of {@code rooms.maxAckTimeout}. */
    public static final Duration MIN_MAX_ACK_TIMEOUT = Duration.ofSeconds(1);
    public static final Duration MAX_MAX_ACK_TIMEOUT = Duration.ofDays(30);
    public static final RoomsConfig DEFAULTS = new RoomsConfig(Duration.ofSeconds(30), Duration.ofMillis(250),
            Duration.ofSeconds(30), Duration.ofHours(1));

    /** The rooms settings with the default {@code rooms.maxAckTimeout}. */
    public RoomsConfig(Duration clientTimeout, Duration housekeepingInterval, Duration resubscribeGrace) {
        this(clientTimeout, housekeepingInterval, resubscribeGrace, Duration.ofHours(1));
    }

    public RoomsConfig {
        if (clientTimeout == null || clientTimeout.compareTo(MIN_CLIENT_TIMEOUT) < 0
                || clientTimeout.compareTo(MAX_CLIENT_TIMEOUT) > 0) {
            throw new ConfigException("rooms.clientTimeout must be between " + Settings.format(MIN_CLIENT_TIMEOUT)
                    + " and " + Settings.format(MAX_CLIENT_TIMEOUT) + ", got "
                    + (clientTimeout == null ? "nothing" : Settings.format(clientTimeout)));
        }
        if (housekeepingInterval == null || housekeepingInterval.toMillis() < 1
                || housekeepingInterval.compareTo(MAX_HOUSEKEEPING_INTERVAL) > 0) {
            throw new ConfigException("rooms.housekeepingInterval must be between 1ms and "
                    + Settings.format(MAX_HOUSEKEEPING_INTERVAL) + " (half the shortest client timeout)");
        }
        if (resubscribeGrace == null || resubscribeGrace.isNegative()) {
            throw new ConfigException("rooms.resubscribeGrace must not be negative");
        }
        if (maxAckTimeout == null || maxAckTimeout.compareTo(MIN_MAX_ACK_TIMEOUT) < 0
                || maxAckTimeout.compareTo(MAX_MAX_ACK_TIMEOUT) > 0) {
            throw new ConfigException("rooms.maxAckTimeout must be between 1s and 30d");
        }
    }

    public static RoomsConfig from(Settings s) {
        return new RoomsConfig(
                s.duration("rooms.clientTimeout", DEFAULTS.clientTimeout, MIN_CLIENT_TIMEOUT),
                s.duration("rooms.housekeepingInterval", DEFAULTS.housekeepingInterval, Duration.ofMillis(1)),
                s.duration("rooms.resubscribeGrace", DEFAULTS.resubscribeGrace, Duration.ZERO),
                s.duration("rooms.maxAckTimeout", DEFAULTS.maxAckTimeout, MIN_MAX_ACK_TIMEOUT));
    }
}
