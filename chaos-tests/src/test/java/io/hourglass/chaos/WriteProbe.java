package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.HourglassClientException;
import io.hourglass.client.InvalidRequestException;
import io.hourglass.client.Message;
import io.hourglass.client.RetryPolicy;
import java.time.Duration;
import java.util.List;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Times how long a cluster takes to accept writes again after a fault: publishes one message at a
 * time, through a client that lists every node, each attempt with a short deadline, until one
 * commits. A client that knows every node is what an application has, so the time includes the
 * client's own failover, not only the Raft election.
 *
 * <p>Not thread-safe: publishes run on the calling thread. Probe messages go to their own topic,
 * which nobody consumes.
 */
final class WriteProbe implements AutoCloseable {
    private static final Duration ATTEMPT_DEADLINE = Duration.ofMillis(500);
    private static final RetryPolicy SHORT_RETRIES =
            new RetryPolicy(Duration.ofMillis(10), Duration.ofMillis(100), Duration.ofSeconds(1));
    private static final Duration POLL = Duration.ofMillis(10);

    private final HourglassClient client;
    private final String topic;
    private int sent;
    private long lastSuccessNanos;
    private HourglassClientException lastError;

    WriteProbe(List<String> servers, String topic) {
        this.client = HourglassClient.builder().servers(servers).callTimeout(ATTEMPT_DEADLINE)
                .retryPolicy(SHORT_RETRIES).closeTimeout(Duration.ofSeconds(1)).build();
        this.topic = topic;
    }

    /** Waits until a publish succeeds; call it before the fault so that the client is connected. */
    void awaitWritable(Duration atMost) {
        awaitPublish(atMost);
    }

    /**
     * Publishes until one message commits and returns the time from {@code faultNanos}
     * ({@link System#nanoTime()} taken just before the fault) to that commit.
     *
     * @throws AssertionError if nothing commits within {@code atMost}
     */
    Duration timeToFirstPublishSince(long faultNanos, Duration atMost) {
        awaitPublish(atMost);
        return Duration.ofNanos(lastSuccessNanos - faultNanos);
    }

    private void awaitPublish(Duration atMost) {
        try {
            await("a publish to " + topic + " commits").atMost(atMost).pollInSameThread()
                    .pollDelay(Duration.ZERO).pollInterval(POLL).until(this::tryPublish);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("no publish committed within " + atMost + "; last error: " + lastError, e);
        }
    }

    private boolean tryPublish() {
        try {
            client.publish(Message.of(topic, "probe-" + sent++));
            lastSuccessNanos = System.nanoTime();
            return true;
        } catch (InvalidRequestException e) {
            throw e;
        } catch (HourglassClientException e) {
            lastError = e;
            return false;
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
