package io.hourglass.chaos;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How long a three-node process cluster refuses writes after its leader is killed with
 * {@code kill -9}: the time from the kill to the first publish that commits, through a client
 * that lists every node and retries with a short per-attempt deadline (see {@link WriteProbe}).
 * Repeated {@code -Dhourglass.measure.rounds} times (default 5), the killed node restarted and
 * every node ready between rounds; prints {@code FAILOVER_MS median=… samples=[…]}.
 *
 * <p>A measurement, skipped unless {@code -Dhourglass.measure=true}; only a generous sanity bound
 * is asserted. {@link ProcessClusterFailoverTest} prints a single sample on every build.
 */
@Timeout(value = 20, unit = TimeUnit.MINUTES)
final class FailoverTimeMeasurementTest {
    private static final int ROUNDS = Integer.getInteger("hourglass.measure.rounds", 5);
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration LEADER_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration FAILOVER_BOUND = Duration.ofSeconds(60);

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();

    private Distribution distribution;
    private ProcessCluster cluster;

    @BeforeEach
    void startCluster() {
        assumeTrue(Measurements.enabled(), "a measurement; run with -D" + Measurements.ENABLED_PROPERTY + "=true");
        distribution = Distribution.locate();
        cluster = ProcessCluster.create(distribution, distribution.newRunDir(getClass().getSimpleName()), 3);
        serverLogs.watch(cluster.nodes());
        cluster.startAll(READY_TIMEOUT);
    }

    @AfterEach
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void timeFromKillingTheLeaderToTheFirstCommittedPublish() {
        List<Duration> samples = new ArrayList<>();
        for (int round = 1; round <= ROUNDS; round++) {
            ServerProcess leader = cluster.awaitLeader(LEADER_TIMEOUT);
            try (WriteProbe probe = new WriteProbe(cluster.clientAddresses(), "failover-probe")) {
                probe.awaitWritable(Duration.ofSeconds(30));
                long killedAt = System.nanoTime();
                leader.kill();
                Duration sample = probe.timeToFirstPublishSince(killedAt, FAILOVER_BOUND);
                samples.add(sample);
                System.out.printf("failover round %d/%d: killed leader %s, first publish committed after %d ms%n",
                        round, ROUNDS, leader.nodeId(), sample.toMillis());
            }
            leader.startAndAwaitReady(READY_TIMEOUT);
            cluster.nodes().forEach(n -> n.awaitReady(READY_TIMEOUT));
        }
        Measurements.report(distribution, "FAILOVER_MS median=" + Measurements.medianMillis(samples)
                + " samples=" + samples.stream().map(Duration::toMillis).toList());
        for (Duration sample : samples) {
            assertTrue(sample.compareTo(FAILOVER_BOUND) < 0, () -> "failover took " + sample);
        }
    }
}
