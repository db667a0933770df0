package io.hourglass.server.config;

import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.ConfigSection;
import io.hourglass.core.config.Settings;
import java.time.Duration;

/**
 * Limits of the client gRPC port, so that a hostile or buggy client cannot exhaust the node.
 * Keys, defaults and bounds: the declarations below.
 *
 * @param executorThreads {@link #EXECUTOR_THREADS}: bounded, so that a burst of calls or of cancellations
 *        queues work instead of starting a thread each
 * @param maxConcurrentStreams {@link #MAX_CONCURRENT_STREAMS}
 * @param keepAliveTime {@link #KEEP_ALIVE_TIME}
 * @param keepAliveTimeout {@link #KEEP_ALIVE_TIMEOUT}
 * @param permitKeepAliveTime {@link #PERMIT_KEEP_ALIVE_TIME}
 * @param maxConnectionIdle {@link #MAX_CONNECTION_IDLE}
 * @param initTimeout {@link #INIT_TIMEOUT}
 * @param maxConsumers {@link #MAX_CONSUMERS}
 */
public record GrpcConfig(int executorThreads, int maxConcurrentStreams, Duration keepAliveTime,
                         Duration keepAliveTimeout, Duration permitKeepAliveTime, Duration maxConnectionIdle,
                         Duration initTimeout, int maxConsumers) {
    public static final ConfigKey<Integer> EXECUTOR_THREADS = ConfigKey.integer(
            "grpc.executorThreads", 32, 2, 1024,
            "Threads that run the calls of the client port. Bounded: a burst of calls or of stream cancellations "
                    + "queues work instead of starting a thread each.");
    public static final ConfigKey<Integer> MAX_CONCURRENT_STREAMS = ConfigKey.integer(
            "grpc.maxConcurrentStreams", 128, 1, 100_000,
            "Most calls open at once on one client connection; a client that needs more opens more connections.");
    public static final ConfigKey<Duration> KEEP_ALIVE_TIME = ConfigKey.duration(
            "grpc.keepAliveTime", "30s", "1s",
            "The server pings a connection that has been quiet this long, to find peers that are gone.");
    public static final ConfigKey<Duration> KEEP_ALIVE_TIMEOUT = ConfigKey.duration(
            "grpc.keepAliveTimeout", "10s", "1s",
            "A keepalive ping unanswered for this long closes the connection.");
    public static final ConfigKey<Duration> PERMIT_KEEP_ALIVE_TIME = ConfigKey.duration(
            "grpc.permitKeepAliveTime", "10s", "1s",
            "Clients may send keepalive pings at most this often (with or without calls); a client that pings "
                    + "more often is disconnected with GOAWAY ENHANCE_YOUR_CALM.");
    public static final ConfigKey<Duration> MAX_CONNECTION_IDLE = ConfigKey.duration(
            "grpc.maxConnectionIdle", "15m", "1s",
            "A connection without any call for this long is closed gracefully; clients reconnect when they next "
                    + "need it.");
    public static final ConfigKey<Duration> INIT_TIMEOUT = ConfigKey.duration(
            "grpc.initTimeout", "10s", "100ms",
            "A Subscribe or room Session stream that has not sent its first frame (init / open) this long after "
                    + "opening is closed with DEADLINE_EXCEEDED.");
    public static final ConfigKey<Integer> MAX_CONSUMERS = ConfigKey.integer(
            "grpc.maxConsumers", 10_000, 1, 1_000_000,
            "Subscribe streams (consumers) this node serves at once; one more is refused with RESOURCE_EXHAUSTED.");

    /** The keys of this record, in the order the configuration reference lists them. */
    public static final ConfigSection SECTION = ConfigSection.of(
            "Client gRPC port: limits a hostile or buggy client cannot get past", EXECUTOR_THREADS,
            MAX_CONCURRENT_STREAMS, KEEP_ALIVE_TIME, KEEP_ALIVE_TIMEOUT, PERMIT_KEEP_ALIVE_TIME, MAX_CONNECTION_IDLE,
            INIT_TIMEOUT, MAX_CONSUMERS);

    public static final GrpcConfig DEFAULTS = from(Settings.empty());

    public GrpcConfig {
        EXECUTOR_THREADS.check(executorThreads);
        MAX_CONCURRENT_STREAMS.check(maxConcurrentStreams);
        KEEP_ALIVE_TIME.check(keepAliveTime);
        KEEP_ALIVE_TIMEOUT.check(keepAliveTimeout);
        PERMIT_KEEP_ALIVE_TIME.check(permitKeepAliveTime);
        MAX_CONNECTION_IDLE.check(maxConnectionIdle);
        INIT_TIMEOUT.check(initTimeout);
        MAX_CONSUMERS.check(maxConsumers);
    }

    public static GrpcConfig from(Settings s) {
        return new GrpcConfig(EXECUTOR_THREADS.read(s), MAX_CONCURRENT_STREAMS.read(s), KEEP_ALIVE_TIME.read(s),
                KEEP_ALIVE_TIMEOUT.read(s), PERMIT_KEEP_ALIVE_TIME.read(s), MAX_CONNECTION_IDLE.read(s),
                INIT_TIMEOUT.read(s), MAX_CONSUMERS.read(s));
    }
}
