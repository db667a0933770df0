package io.hourglass.core.config;

import java.time.Duration;

/**
 * Settings of the lock-step rooms engine (ROOMS.md, DESIGN §6). Keys, defaults and bounds: the
 * declarations below; the constructor holds configured and hand-built records to the same bounds.
 *
 * @param clientTimeout {@link #CLIENT_TIMEOUT}: also the bounds of the heartbeat timeout a session may choose
 * @param housekeepingInterval {@link #HOUSEKEEPING_INTERVAL}: at most half the shortest allowed client timeout,
 *        so an eviction is never more than {@code clientTimeout/2} late
 * @param resubscribeGrace {@link #RESUBSCRIBE_GRACE}: without it, the "no sync members" rule would hand a
 *        surviving backlog to async listeners before anyone is back
 * @param maxAckTimeout {@link #MAX_ACK_TIMEOUT}: beyond it a hung member would block a room for practically
 *        ever, which is what "no ack timeout" (0) already says explicitly
 */
public record RoomsConfig(Duration clientTimeout, Duration housekeepingInterval, Duration resubscribeGrace,
                          Duration maxAckTimeout) {
    public static final ConfigKey<Duration> CLIENT_TIMEOUT = ConfigKey.duration(
            "rooms.clientTimeout", "30s", "1s", "1d",
            "Heartbeat timeout of a room session that does not choose its own: a sync member that has not pinged, "
                    + "acked, subscribed or sent for this long is evicted from the room.");
    public static final ConfigKey<Duration> HOUSEKEEPING_INTERVAL = ConfigKey.duration(
            "rooms.housekeepingInterval", "250ms", "1ms", "500ms",
            "How often evictions, ack timeouts and failed releases are checked; an eviction is at most this late.");
    public static final ConfigKey<Duration> MAX_ACK_TIMEOUT = ConfigKey.duration(
            "rooms.maxAckTimeout", "1h", "1s", "30d",
            "Longest ack timeout 'room configure --ack-timeout' may give a room; longer ones are refused with "
                    + "INVALID_ARGUMENT (0, no ack timeout, stays allowed).");
    public static final ConfigKey<Duration> RESUBSCRIBE_GRACE = ConfigKey.duration(
            "rooms.resubscribeGrace", "30s", "0ms",
            "After a failover, how long a room whose backlog survived keeps it while none of its sync members has "
                    + "resubscribed yet (afterwards the backlog goes to its async listeners, or is dropped). A room "
                    + "with a message in flight resumes once every member that held it has resubscribed, and waits "
                    + "for those that do not come back at most this or rooms.clientTimeout, whichever is shorter.");

    /** The keys of this record, in the order the configuration reference lists them. */
    public static final ConfigSection SECTION = ConfigSection.of("Lock-step rooms", CLIENT_TIMEOUT,
            HOUSEKEEPING_INTERVAL, MAX_ACK_TIMEOUT, RESUBSCRIBE_GRACE);

    /** The shortest heartbeat timeout a session may choose (ROOMS.md). */
    public static final Duration MIN_CLIENT_TIMEOUT = CLIENT_TIMEOUT.min().orElseThrow();
    /** The longest heartbeat timeout a session may choose. */
    public static final Duration MAX_CLIENT_TIMEOUT = CLIENT_TIMEOUT.max().orElseThrow();
    /** The longest housekeeping interval: half of {@link #MIN_CLIENT_TIMEOUT}. */
    public static final Duration MAX_HOUSEKEEPING_INTERVAL = HOUSEKEEPING_INTERVAL.max().orElseThrow();
    /** The bounds of {@code rooms.maxAckTimeout}. */
    public static final Duration MIN_MAX_ACK_TIMEOUT = MAX_ACK_TIMEOUT.min().orElseThrow();
    public static final Duration MAX_MAX_ACK_TIMEOUT = MAX_ACK_TIMEOUT.max().orElseThrow();

    static {
        if (!MAX_HOUSEKEEPING_INTERVAL.equals(MIN_CLIENT_TIMEOUT.dividedBy(2))) {
            throw new IllegalStateException("rooms.housekeepingInterval's maximum must be half the shortest "
                    + "rooms.clientTimeout");
        }
    }

    public static final RoomsConfig DEFAULTS = from(Settings.empty());

    /** The rooms settings with the default {@code rooms.maxAckTimeout}. */
    public RoomsConfig(Duration clientTimeout, Duration housekeepingInterval, Duration resubscribeGrace) {
        this(clientTimeout, housekeepingInterval, resubscribeGrace, MAX_ACK_TIMEOUT.defaultValue());
    }

    public RoomsConfig {
        CLIENT_TIMEOUT.check(clientTimeout);
        HOUSEKEEPING_INTERVAL.check(housekeepingInterval);
        RESUBSCRIBE_GRACE.check(resubscribeGrace);
        MAX_ACK_TIMEOUT.check(maxAckTimeout);
    }

    public static RoomsConfig from(Settings s) {
        return new RoomsConfig(CLIENT_TIMEOUT.read(s), HOUSEKEEPING_INTERVAL.read(s), RESUBSCRIBE_GRACE.read(s),
                MAX_ACK_TIMEOUT.read(s));
    }
}
