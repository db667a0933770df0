package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.Subscription;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * kill -9 of the leader under load, as users see it: a client that lists only the followers publishes
 * at {@code -Dhourglass.measure.rate} (default 1 000) messages a second while a group consumer of the same
 * client takes them; after {@value #BEFORE_MS} ms the leader is killed and publishing goes on for
 * {@value #AFTER_MS} ms. Each round (default 10, {@code -Dhourglass.measure.rounds}; nodes
 * {@code -Dhourglass.measure.nodes}, default 3) reports, counted from the kill:
 * <ul>
 *   <li>publish recovery: until the first acknowledgement of a publish issued after the kill;</li>
 *   <li>delivery recovery: until the consumer receives the first message published after the kill;</li>
 *   <li>the longest silence between two acknowledgements and between two deliveries;</li>
 *   <li>publish errors, and acknowledged messages never delivered (must be 0).</li>
 * </ul>
 * Prints {@code LOADED_FAILOVER} with the medians and maxima. A measurement, skipped unless
 * {@code -Dhourglass.measure=true}; asserted: nothing acknowledged is lost, and both recoveries stay
 * under a generous sanity bound.
 */
@Timeout(value = 40, unit = TimeUnit.MINUTES)
final class LoadedFailoverMeasurementTest {
    private static final int ROUNDS = Integer.getInteger("hourglass.measure.rounds", 10);
    private static final int NODES = Integer.getInteger("hourglass.measure.nodes", 3);
    private static final int RATE = Integer.getInteger("hourglass.measure.rate", 1000);
    private static final long BEFORE_MS = 4_000;
    private static final long AFTER_MS = 6_000;
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration SANITY_BOUND = Duration.ofSeconds(20);

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();
    private ProcessCluster cluster;

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void publishAndDeliveryRecoverAfterTheLeaderIsKilledUnderLoad() throws Exception {
        assumeTrue(Measurements.enabled(), "a measurement; run with -D" + Measurements.ENABLED_PROPERTY + "=true");
        Distribution distribution = Distribution.locate();
        cluster = ProcessCluster.create(distribution, distribution.newRunDir(getClass().getSimpleName()), NODES);
        serverLogs.watch(cluster.nodes());
        cluster.startAll(READY_TIMEOUT);
        List<Round> rounds = new ArrayList<>();
        for (int r = 1; r <= ROUNDS; r++) {
            Round round = round("failover-" + r);
            rounds.add(round);
            System.out.printf("loaded failover round %d/%d (%d nodes, %d msg/s): %s%n", r, ROUNDS, NODES, RATE, round);
        }
        Measurements.report(distribution, String.format("LOADED_FAILOVER nodes=%d rate=%d rounds=%d"
                        + " publishRecoveryMs median=%d max=%d deliveryRecoveryMs median=%d max=%d"
                        + " consumerResumedMs median=%d aheadOfNew median=%d"
                        + " ackGapMs median=%d max=%d deliveryGapMs median=%d max=%d publishErrors=%d lost=%d samples=%s",
                NODES, RATE, ROUNDS,
                median(rounds, Round::publishRecoveryMs), max(rounds, Round::publishRecoveryMs),
                median(rounds, Round::deliveryRecoveryMs), max(rounds, Round::deliveryRecoveryMs),
                median(rounds, Round::resumedMs), median(rounds, Round::aheadOfNew),
                median(rounds, Round::ackGapMs), max(rounds, Round::ackGapMs),
                median(rounds, Round::deliveryGapMs), max(rounds, Round::deliveryGapMs),
                rounds.stream().mapToLong(Round::publishErrors).sum(), rounds.stream().mapToLong(Round::lost).sum(),
                rounds));
        for (Round round : rounds) {
            assertEquals(0, round.lost(), "acknowledged but never delivered: " + round);
            assertTrue(round.publishRecoveryMs() < SANITY_BOUND.toMillis(), round::toString);
            assertTrue(round.deliveryRecoveryMs() < SANITY_BOUND.toMillis(), round::toString);
        }
    }

    /** One kill under load; the killed node is restarted and every node is ready again before it returns. */
    private Round round(String topic) throws InterruptedException {
        ServerProcess leader = cluster.awaitLeader(Duration.ofSeconds(60));
        List<String> followers = cluster.nodes().stream().filter(n -> n != leader)
                .map(n -> n.ports().grpcAddress()).toList();
        int total = (int) (RATE * (BEFORE_MS + AFTER_MS) / 1000);
        AtomicLongArray ackedAt = new AtomicLongArray(total);
        AtomicLongArray deliveredAt = new AtomicLongArray(total);
        AtomicInteger errors = new AtomicInteger();
        AtomicLong killedAt = new AtomicLong(Long.MAX_VALUE);
        long[] issuedAt = new long[total];
        java.util.concurrent.CompletableFuture<?>[] published = new java.util.concurrent.CompletableFuture<?>[total];
        java.util.Queue<long[]> deliveries = new java.util.concurrent.ConcurrentLinkedQueue<>(); // {at, seq}, redeliveries too
        try (HourglassClient client = HourglassClient.builder().servers(followers).build();
                Subscription ignored = client.subscribe(topic, "g", (m, ctx) -> {
                    long at = System.nanoTime();
                    int seq = ByteBuffer.wrap(m.payload()).getInt();
                    deliveredAt.compareAndSet(seq, 0, at);
                    deliveries.add(new long[] {at, seq});
                    ctx.ack();
                })) {
            Thread killer = new Thread(() -> {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(BEFORE_MS));
                killedAt.set(System.nanoTime());
                leader.kill();
            }, "leader-killer");
            long start = System.nanoTime();
            killer.start();
            for (int i = 0; i < total; i++) {
                long due = start + TimeUnit.SECONDS.toNanos(i) / RATE;
                for (long now = System.nanoTime(); now < due; now = System.nanoTime()) {
                    LockSupport.parkNanos(due - now);
                }
                int seq = i;
                issuedAt[i] = System.nanoTime();
                byte[] payload = ByteBuffer.allocate(1024).putInt(seq).array();
                published[i] = client.publishAsync(Message.builder(topic).payload(payload).build()).whenComplete((r, e) -> {
                    if (e == null) {
                        ackedAt.set(seq, System.nanoTime());
                    } else {
                        errors.incrementAndGet();
                    }
                });
            }
            client.flush();
            killer.join();
            // every publish answered first: one acknowledged after the check below would count as lost
            java.util.concurrent.CompletableFuture.allOf(published).handle((r, e) -> null).get(2, TimeUnit.MINUTES);
            await("every acknowledged message delivered").atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(50))
                    .until(() -> undelivered(ackedAt, deliveredAt) == 0);
        } catch (org.awaitility.core.ConditionTimeoutException | java.util.concurrent.ExecutionException
                | java.util.concurrent.TimeoutException e) {
            // reported as lost below
        }
        Round round = Round.of(killedAt.get(), issuedAt, ackedAt, deliveredAt, errors.get(), undelivered(ackedAt, deliveredAt),
                List.copyOf(deliveries));
        leader.startAndAwaitReady(READY_TIMEOUT);
        cluster.nodes().forEach(n -> n.awaitReady(READY_TIMEOUT));
        return round;
    }

    private static int undelivered(AtomicLongArray ackedAt, AtomicLongArray deliveredAt) {
        int n = 0;
        for (int i = 0; i < ackedAt.length(); i++) {
            if (ackedAt.get(i) != 0 && deliveredAt.get(i) == 0) {
                n++;
            }
        }
        return n;
    }

    private static long median(List<Round> rounds, java.util.function.ToLongFunction<Round> figure) {
        long[] values = rounds.stream().mapToLong(figure).sorted().toArray();
        return values.length == 0 ? 0 : values[(values.length - 1) / 2];
    }

    private static long max(List<Round> rounds, java.util.function.ToLongFunction<Round> figure) {
        return rounds.stream().mapToLong(figure).max().orElse(0);
    }

    /** The figures of one round, in milliseconds from the kill. */
    record Round(long publishRecoveryMs, long deliveryRecoveryMs, long ackGapMs, long deliveryGapMs,
            long publishErrors, long lost, long resumedMs, long aheadOfNew) {
        /**
         * {@code resumedMs}: until the consumer received anything after the kill (a redelivery counts);
         * {@code aheadOfNew}: deliveries after the kill before the first message published after it
         * (what the old leader handed out unacknowledged, and what it had not handed out yet).
         */
        static Round of(long killedAt, long[] issuedAt, AtomicLongArray ackedAt, AtomicLongArray deliveredAt,
                long errors, long lost, List<long[]> received) {
            long firstAck = Long.MAX_VALUE;
            long firstDelivery = Long.MAX_VALUE;
            List<Long> acks = new ArrayList<>();
            List<Long> deliveries = new ArrayList<>();
            for (int i = 0; i < issuedAt.length; i++) {
                long acked = ackedAt.get(i);
                long delivered = deliveredAt.get(i);
                if (acked != 0) {
                    acks.add(acked);
                }
                if (delivered != 0) {
                    deliveries.add(delivered);
                }
                if (issuedAt[i] > killedAt) {
                    if (acked != 0) {
                        firstAck = Math.min(firstAck, acked);
                    }
                    if (delivered != 0) {
                        firstDelivery = Math.min(firstDelivery, delivered);
                    }
                }
            }
            long resumed = Long.MAX_VALUE;
            long ahead = 0;
            for (long[] d : received) {
                if (d[0] > killedAt && d[0] < firstDelivery) {
                    resumed = Math.min(resumed, d[0]);
                    ahead++;
                }
            }
            return new Round(millisSince(killedAt, firstAck), millisSince(killedAt, firstDelivery),
                    longestGapMs(acks), longestGapMs(deliveries), errors, lost,
                    resumed == Long.MAX_VALUE ? millisSince(killedAt, firstDelivery) : millisSince(killedAt, resumed), ahead);
        }

        private static long millisSince(long from, long to) {
            return to == Long.MAX_VALUE ? Long.MAX_VALUE : TimeUnit.NANOSECONDS.toMillis(to - from);
        }

        private static long longestGapMs(List<Long> times) {
            long[] sorted = times.stream().mapToLong(Long::longValue).sorted().toArray();
            long gap = 0;
            for (int i = 1; i < sorted.length; i++) {
                gap = Math.max(gap, sorted[i] - sorted[i - 1]);
            }
            return TimeUnit.NANOSECONDS.toMillis(gap);
        }

        @Override
        public String toString() {
            return String.format("publish %d ms, delivery %d ms (consumer resumed at %d ms, %d deliveries ahead of the"
                            + " first new message), ack gap %d ms, delivery gap %d ms, errors %d, lost %d",
                    publishRecoveryMs, deliveryRecoveryMs, resumedMs, aheadOfNew, ackGapMs, deliveryGapMs, publishErrors, lost);
        }
    }
}
