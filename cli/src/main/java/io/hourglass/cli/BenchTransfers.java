package io.hourglass.cli;

import io.hourglass.api.v1.ClusterStatusResponse;
import io.hourglass.api.v1.MemberStatus;
import io.hourglass.client.HourglassClient;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * {@code bench --transfer-every D}: moves shard 0's leadership to the next member (in id order)
 * every {@code D} while a timed bench runs, as a rolling restart does, so that the bench's
 * {@code maxGapMs} (the longest time without a publish acknowledged) and its error count say what a
 * planned leadership transfer costs the clients. Adds {@code transfers}, {@code transferFailures}
 * and {@code transferP50Ms} / {@code transferMaxMs} (how long each transfer call took) to the record;
 * each transfer is a progress line on stderr.
 */
final class BenchTransfers implements AutoCloseable {
    private final HourglassClient client;
    private final PrintWriter err;
    private final long startNanos;
    private final ScheduledExecutorService timer;
    /** Guarded by this. */
    private final Histogram took = new Histogram(TimeUnit.MINUTES.toMillis(1), 3);
    private long failures;

    private BenchTransfers(HourglassClient client, Duration every, PrintWriter err, long startNanos) {
        this.client = client;
        this.err = err;
        this.startNanos = startNanos;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-transfers");
            t.setDaemon(true);
            return t;
        });
        long ms = every.toMillis();
        timer.scheduleWithFixedDelay(this::transferOnce, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** Starts transferring every {@code every}, or does nothing when it is null. */
    static BenchTransfers start(HourglassClient client, Duration every, PrintWriter err, long startNanos) {
        return every == null ? null : new BenchTransfers(client, every, err, startNanos);
    }

    private void transferOnce() {
        String from = "?";
        String to = "?";
        try {
            ClusterStatusResponse status = client.admin().clusterStatus();
            from = status.getLeaderId();
            to = next(from, status.getMembersList());
            long begin = System.nanoTime();
            client.admin().transferLeader(to);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin);
            synchronized (this) {
                took.recordValue(Math.min(took.getHighestTrackableValue(), ms));
            }
            progress("leadership " + from + " -> " + to + " in " + ms + " ms");
        } catch (RuntimeException e) {
            synchronized (this) {
                failures++;
            }
            progress("leadership " + from + " -> " + to + " failed: " + e.getMessage());
        }
    }

    /** The member after {@code leader} in id order among shard 0's members that answered. */
    static String next(String leader, List<MemberStatus> members) {
        List<String> ids = members.stream().filter(m -> m.getNode().getShard() == 0 && m.getUp())
                .map(m -> m.getNode().getId()).distinct().sorted().toList();
        if (ids.size() < 2) {
            throw new IllegalStateException("no other member to move the leadership to");
        }
        int at = ids.indexOf(leader);
        return ids.get((at + 1) % ids.size());
    }

    private void progress(String line) {
        synchronized (err) {
            err.printf("%.1f s: %s%n", (System.nanoTime() - startNanos) / 1e9, line);
            err.flush();
        }
    }

    /** Adds the transfer counts and durations to {@code record}. */
    synchronized void putInto(Map<String, Object> record) {
        record.put("transfers", took.getTotalCount());
        record.put("transferFailures", failures);
        if (took.getTotalCount() > 0) {
            record.put("transferP50Ms", took.getValueAtPercentile(50));
            record.put("transferMaxMs", took.getMaxValue());
        }
    }

    /** Stops transferring; waits for a transfer under way. */
    @Override
    public void close() throws InterruptedException {
        timer.shutdown();
        timer.awaitTermination(30, TimeUnit.SECONDS);
    }
}
