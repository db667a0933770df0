package io.hourglass.client;

import java.time.Duration;

/**
 * How the publisher groups messages into requests.
 *
 * <p>A batch is one {@code Publish} call and one Raft log entry. {@link HourglassClient#publishAsync}
 * adds messages to an open batch that is sent when it holds {@code maxBatchMessages} messages or
 * {@code maxBatchBytes} bytes, or {@code linger} after its first message, whichever comes first
 * ({@code linger = 0} sends every message at once). A message that finds no request outstanding
 * and none waiting goes out at once: there is nothing for it to share a request with yet, and
 * lingering would only add the linger to its latency (a lone synchronous publish, a trickle of
 * events); the messages that follow while it is out gather in the next batch. At most
 * {@code maxInFlightBatches} batches are outstanding; further ones wait in order.
 *
 * @param maxBatchMessages messages per request (default 500)
 * @param maxBatchBytes encoded bytes per request (default 1 MiB); a larger single message is
 *     sent alone
 * @param linger how long an open batch waits for more messages while requests are outstanding
 *     (default 2 ms)
 * @param maxInFlightBatches requests outstanding at once (default 8)
 * @param callTimeout deadline of one attempt of one request (default 10 s)
 */
public record PublishConfig(int maxBatchMessages, int maxBatchBytes, Duration linger,
                            int maxInFlightBatches, Duration callTimeout) {
    public static final PublishConfig DEFAULT = new PublishConfig(
            500, 1 << 20, Duration.ofMillis(2), 8, Duration.ofSeconds(10));

    public PublishConfig {
        if (maxBatchMessages < 1) {
            throw new IllegalArgumentException("maxBatchMessages must be >= 1: " + maxBatchMessages);
        }
        if (maxBatchBytes < 1) {
            throw new IllegalArgumentException("maxBatchBytes must be >= 1: " + maxBatchBytes);
        }
        if (linger == null || linger.isNegative()) {
            throw new IllegalArgumentException("linger must not be negative: " + linger);
        }
        if (maxInFlightBatches < 1) {
            throw new IllegalArgumentException("maxInFlightBatches must be >= 1: " + maxInFlightBatches);
        }
        RetryPolicy.requirePositive(callTimeout, "callTimeout");
    }
}
