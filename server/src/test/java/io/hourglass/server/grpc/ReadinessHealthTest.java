package io.hourglass.server.grpc;

import static io.hourglass.server.testing.StandardServices.health;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.hourglass.raft.Readiness;
import io.hourglass.server.testing.StreamRecorder;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The health service's statuses follow readiness, read from a supplier the test sets, over an
 * in-process channel: NOT_SERVING until the first read, then as readiness says, for the whole server
 * and for each service named; after {@code close()}, NOT_SERVING for good.
 */
@Timeout(60)
class ReadinessHealthTest {
    private static final List<String> SERVICES = List.of("hourglass.v1.Broker", "hourglass.v1.Rooms");
    private static final List<String> ALL = List.of("", "hourglass.v1.Broker", "hourglass.v1.Rooms");
    private static final Readiness READY = new Readiness(true, "ready");
    private static final Readiness NO_LEADER = new Readiness(false, "no leader known");

    /** What the supplier answers; null makes it throw. */
    private final AtomicReference<Readiness> readiness = new AtomicReference<>(NO_LEADER);
    private ReadinessHealth health;
    private Server server;
    private ManagedChannel channel;

    @BeforeEach
    void start() throws IOException {
        health = new ReadinessHealth("n1", () -> {
            Readiness r = readiness.get();
            if (r == null) {
                throw new IllegalStateException("raft group closed");
            }
            return r;
        }, SERVICES);
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name).directExecutor().addService(health.service()).build().start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        health.close();
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    private void awaitEvery(ServingStatus expected) {
        await("every status " + expected).atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            for (String service : ALL) {
                assertEquals(expected, health(channel, service), "service '" + service + "'");
            }
        });
    }

    @Test
    void everyStatusIsNotServingUntilReadinessHasBeenRead() {
        readiness.set(READY);
        for (String service : ALL) {
            assertEquals(ServingStatus.NOT_SERVING, health(channel, service), "service '" + service + "'");
        }
        health.start();
        awaitEvery(ServingStatus.SERVING);
    }

    @Test
    void everyStatusFollowsReadinessBothWays() {
        health.start();
        readiness.set(READY);
        awaitEvery(ServingStatus.SERVING);
        readiness.set(new Readiness(false, "catching up: 2950 committed entries not applied yet"));
        awaitEvery(ServingStatus.NOT_SERVING);
        readiness.set(READY);
        awaitEvery(ServingStatus.SERVING);
    }

    @Test
    void aReadinessThatFailsCountsAsNotReadyAndTheReadsGoOn() {
        health.start();
        readiness.set(READY);
        awaitEvery(ServingStatus.SERVING);
        readiness.set(null);
        awaitEvery(ServingStatus.NOT_SERVING);
        readiness.set(READY);
        awaitEvery(ServingStatus.SERVING);
    }

    @Test
    void aServiceNotNamedIsNotFound() {
        health.start();
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> health(channel, "hourglass.v1.NoSuchService"));
        assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
    }

    @Test
    void closingTurnsEveryStatusNotServingForGoodAndTellsWatchers() {
        health.start();
        readiness.set(READY);
        awaitEvery(ServingStatus.SERVING);
        StreamRecorder<HealthCheckResponse> watcher = new StreamRecorder<>();
        HealthGrpc.newStub(channel).watch(HealthCheckRequest.newBuilder().setService("").build(), watcher);
        watcher.awaitValue(r -> r.getStatus() == ServingStatus.SERVING);

        health.close();
        watcher.awaitValue(r -> r.getStatus() == ServingStatus.NOT_SERVING);
        awaitEvery(ServingStatus.NOT_SERVING);
        // Readiness still says ready; the statuses must not turn back.
        await("still NOT_SERVING").during(ReadinessHealth.POLL_EVERY.multipliedBy(3)).atMost(Duration.ofSeconds(10))
                .until(() -> health(channel, "") == ServingStatus.NOT_SERVING);
    }
}
