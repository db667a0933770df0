package io.hourglass.server.config;

import io.hourglass.core.config.ConfigException;
import io.hourglass.core.config.Settings;
import java.time.Duration;

/**
 * Limits of the client gRPC port, so that a hostile or buggy client cannot exhaust the node.
 *
 * @param executorThreads {@code grpc.executorThreads} (32, 2 to 1024): threads that run the services' calls;
 *        bounded, so that a burst of calls or of cancellations queues work instead of starting a thread each
 * @param maxConcurrentStreams {@code grpc.maxConcurrentStreams} (128, 1 to 100000): open calls per connection
 * @param keepAliveTime {@code grpc.keepAliveTime} (30s, at least 1s): the server pings a connection that was
 *        quiet this long, to find dead peers
 * @param keepAliveTimeout {@code grpc.keepAliveTimeout} (10s, at least 1s): a ping unanswered this long closes
 *        the connection
 * @param permitKeepAliveTime {@code grpc.permitKeepAliveTime} (10s, at least 1s): clients may ping at most
 *        this often; one that pings more often is disconnected (GOAWAY ENHANCE_YOUR_CALM)
 * @param maxConnectionIdle {@code grpc.maxConnectionIdle} (15m, at least 1s): a connection without any call
 *        for this long is closed gracefully (clients reconnect when they need it)
 * @param initTimeout {@code grpc.initTimeout} (10s, at least 100ms): a Subscribe or room Session stream that
 *        has not sent its first (init / open) frame within this time is closed with DEADLINE_EXCEEDED
 * @param maxConsumers {@code grpc.maxConsumers} (10000, 1 to 1000000): Subscribe streams this node serves
 *        at once; one more is refused with RESOURCE_EXHAUSTED
 */
public record GrpcConfig(int executorThreads, int maxConcurrentStreams, Duration keepAliveTime,
                         Duration keepAliveTimeout, Duration permitKeepAliveTime, Duration maxConnectionIdle,
                         Duration initTimeout, int maxConsumers) {
    public static final GrpcConfig DEFAULTS = new GrpcConfig(32, 128, Duration.ofSeconds(30), Duration.ofSeconds(10),
            Duration.ofSeconds(10), Duration.ofMinutes(15), Duration.ofSeconds(10), 10_000);

    public GrpcConfig {
        if (executorThreads < 2 || maxConcurrentStreams < 1 || maxConsumers < 1) {
            throw new ConfigException("grpc.executorThreads must be at least 2, grpc.maxConcurrentStreams and "
                    + "grpc.maxConsumers at least 1");
        }
        for (Duration d : new Duration[] {keepAliveTime, keepAliveTimeout, permitKeepAliveTime, maxConnectionIdle,
            initTimeout}) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new ConfigException("grpc.* durations must be positive");
            }
        }
    }

    public static GrpcConfig from(Settings s) {
        Duration second = Duration.ofSeconds(1);
        return new GrpcConfig(
                s.integer("grpc.executorThreads", DEFAULTS.executorThreads, 2, 1024),
                s.integer("grpc.maxConcurrentStreams", DEFAULTS.maxConcurrentStreams, 1, 100_000),
                s.duration("grpc.keepAliveTime", DEFAULTS.keepAliveTime, second),
                s.duration("grpc.keepAliveTimeout", DEFAULTS.keepAliveTimeout, second),
                s.duration("grpc.permitKeepAliveTime", DEFAULTS.permitKeepAliveTime, second),
                s.duration("grpc.maxConnectionIdle", DEFAULTS.maxConnectionIdle, second),
                s.duration("grpc.initTimeout", DEFAULTS.initTimeout, Duration.ofMillis(100)),
                s.integer("grpc.maxConsumers", DEFAULTS.maxConsumers, 1, 1_000_000));
    }
}
