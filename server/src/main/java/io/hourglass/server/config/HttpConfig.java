package io.hourglass.server.config;

import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.ConfigSection;
import io.hourglass.core.config.Settings;
import java.time.Duration;

/**
 * The HTTP endpoint ({@code /metrics}, {@code /healthz}, {@code /readyz}): probes must answer even
 * while clients hold connections open with half-sent requests. Keys, defaults and bounds: the
 * declarations below ({@link #PORT} is listed with the node's ports).
 *
 * @param port {@link #PORT}
 * @param threads {@link #THREADS}: half-sent requests wait in the selector, not on these threads
 * @param idleTimeout {@link #IDLE_TIMEOUT}
 * @param maxConnections {@link #MAX_CONNECTIONS}
 * @param console {@link #CONSOLE}
 */
public record HttpConfig(int port, int threads, Duration idleTimeout, int maxConnections, boolean console) {
    public static final ConfigKey<Integer> PORT = ConfigKey.integer(
            "http.port", 7072, 0, 65_535,
            "HTTP port for /metrics (Prometheus), /healthz (process up) and /readyz (leader known, caught up). "
                    + "(--http-port)");
    public static final ConfigKey<Integer> THREADS = ConfigKey.integer(
            "http.threads", 8, 3, 64,
            "Threads that serve /metrics, /healthz and /readyz. A client that sends half a request holds no "
                    + "thread: requests are parsed as bytes arrive.");
    public static final ConfigKey<Duration> IDLE_TIMEOUT = ConfigKey.duration(
            "http.idleTimeout", "5s", "100ms", "10m",
            "A connection that sends nothing for this long, a request stuck half-way included, is closed.");
    public static final ConfigKey<Integer> MAX_CONNECTIONS = ConfigKey.integer(
            "http.maxConnections", 64, 1, 10_000,
            "HTTP connections open at once; further ones wait in the kernel's accept queue until one closes.");

    public static final ConfigKey<Boolean> CONSOLE = ConfigKey.flag(
            "http.console", true,
            "Serve the web console at / and the JSON it reads under /api/v1/. Its calls go through the node's "
                    + "gRPC API with the caller's token, so it can do what that token may and no more.");

    /** The endpoint's keys but its port, in the order the configuration reference lists them. */
    public static final ConfigSection SECTION = ConfigSection.of("HTTP endpoint", THREADS, IDLE_TIMEOUT,
            MAX_CONNECTIONS, CONSOLE);

    public static final HttpConfig DEFAULTS = from(Settings.empty());

    public HttpConfig {
        PORT.check(port);
        THREADS.check(threads);
        IDLE_TIMEOUT.check(idleTimeout);
        MAX_CONNECTIONS.check(maxConnections);
    }

    public static HttpConfig from(Settings s) {
        return new HttpConfig(PORT.read(s), THREADS.read(s), IDLE_TIMEOUT.read(s), MAX_CONNECTIONS.read(s),
                CONSOLE.read(s));
    }
}
