package io.hourglass.server.config;

import io.hourglass.core.config.Settings;
import java.time.Duration;

/**
 * The HTTP endpoint ({@code /metrics}, {@code /healthz}, {@code /readyz}): probes must answer even
 * while clients hold connections open with half-sent requests.
 *
 * @param port {@code http.port} (7072)
 * @param threads {@code http.threads} (8, 3 to 64): the bounded pool that serves requests; half-sent
 *        requests wait in the selector, not on these threads
 * @param idleTimeout {@code http.idleTimeout} (5s, 100ms to 10m): a connection that sends nothing for this
 *        long — a request stuck half-way included — is closed
 * @param maxConnections {@code http.maxConnections} (64, 1 to 10000): connections accepted at once; more
 *        wait in the kernel's accept queue
 */
public record HttpConfig(int port, int threads, Duration idleTimeout, int maxConnections) {
    public static final HttpConfig DEFAULTS = new HttpConfig(7072, 8, Duration.ofSeconds(5), 64);

    public static HttpConfig from(Settings s) {
        Duration idle = s.duration("http.idleTimeout", DEFAULTS.idleTimeout, Duration.ofMillis(100));
        if (idle.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new io.hourglass.core.config.ConfigException("http.idleTimeout must be at most 10m");
        }
        return new HttpConfig(s.integer("http.port", DEFAULTS.port, 0, 65_535),
                s.integer("http.threads", DEFAULTS.threads, 3, 64), idle,
                s.integer("http.maxConnections", DEFAULTS.maxConnections, 1, 10_000));
    }
}
