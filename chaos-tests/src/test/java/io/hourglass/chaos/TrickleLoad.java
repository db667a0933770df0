package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.HourglassClientException;
import io.hourglass.client.Message;
import io.hourglass.client.RetryPolicy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A light publish load on its own thread (a scheduled task, not a sleeping loop): one message of {@code payloadBytes} at a time, every
 * {@code pause}, through a client that lists the given servers (as an application would), each attempt
 * with a short deadline. Counts what committed and what failed and keeps the first failures' messages,
 * so that a test can show the cluster kept serving and what a client was told when the fault began.
 *
 * <p>Thread-safe: the counters are atomics; one test thread calls the rest.
 */
final class TrickleLoad implements AutoCloseable {
    private static final int KEPT_ERRORS = 20;

    private final HourglassClient client;
    private final String topic;
    private final String payload;
    private final AtomicLong committed = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong longestGapNanos = new AtomicLong();
    private final ConcurrentLinkedDeque<String> errors = new ConcurrentLinkedDeque<>();
    /** Runs one publish after another, {@code pause} apart: the pacing, without a sleeping loop. */
    private final ScheduledExecutorService publisher;
    private volatile boolean running = true;
    /** Publisher thread only. */
    private long next;
    private long lastCommit = System.nanoTime();

    /** Retries UNAVAILABLE for up to 10 s, moving between the servers, as an application's client does. */
    static final RetryPolicy RETRYING = new RetryPolicy(Duration.ofMillis(20), Duration.ofMillis(200), Duration.ofSeconds(10));
    /** Gives up after the first attempt: each failure shows what the server said. */
    static final RetryPolicy ONE_ATTEMPT = new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(1), Duration.ofMillis(1));

    TrickleLoad(List<String> servers, String topic, int payloadBytes, Duration pause) {
        this(servers, topic, payloadBytes, pause, RETRYING);
    }

    TrickleLoad(List<String> servers, String topic, int payloadBytes, Duration pause, RetryPolicy retry) {
        this.client = HourglassClient.builder().servers(servers).callTimeout(Duration.ofSeconds(2))
                .retryPolicy(retry).closeTimeout(Duration.ofSeconds(1)).build();
        this.topic = topic;
        this.payload = "x".repeat(payloadBytes);
        this.publisher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "trickle-load-" + topic);
            t.setDaemon(true);
            return t;
        });
        publisher.scheduleWithFixedDelay(this::publishOne, 0, pause.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void publishOne() {
        try {
            client.publish(Message.of(topic, next++ + ":" + payload));
            long now = System.nanoTime();
            longestGapNanos.accumulateAndGet(now - lastCommit, Math::max);
            lastCommit = now;
            committed.incrementAndGet();
        } catch (HourglassClientException e) {
            if (!running) {
                return; // closing: the close interrupted this publish
            }
            failed.incrementAndGet();
            if (errors.size() < KEPT_ERRORS) {
                errors.addLast(e.getMessage());
            }
        }
    }

    long committed() {
        return committed.get();
    }

    long failed() {
        return failed.get();
    }

    /** The longest time between two commits so far. */
    Duration longestGap() {
        return Duration.ofNanos(longestGapNanos.get());
    }

    /** The messages of the first failures (up to 20). */
    List<String> firstErrors() {
        return List.copyOf(errors);
    }

    /** Waits until {@code more} further messages have committed: the cluster is serving. */
    void awaitCommits(long more, Duration atMost) {
        long target = committed() + more;
        await(more + " more publishes commit").atMost(atMost).pollInterval(Duration.ofMillis(100))
                .until(() -> committed() >= target);
    }

    /** Starts counting the longest gap between commits from now on. */
    void resetGap() {
        longestGapNanos.set(0);
    }

    @Override
    public void close() {
        running = false;
        publisher.shutdownNow();
        try {
            publisher.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            client.close();
        }
    }
}
