package io.hourglass.server.grpc;

import io.grpc.BindableService;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import io.hourglass.raft.Readiness;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client port's standard health service ({@code grpc.health.v1.Health}), its statuses following
 * this node's readiness — what {@code /readyz} answers: SERVING for the whole server ({@code ""}) and
 * for each Hourglass service while the node knows a leader and has caught up, NOT_SERVING otherwise.
 *
 * <p>Readiness is read every {@link #POLL_EVERY} on one daemon thread, {@code hourglass-grpc-health},
 * which alone sets the statuses; health calls read them from the {@link HealthStatusManager}, which is
 * thread-safe. Every status is NOT_SERVING until the first read. {@link #close()} stops the reads and
 * sets every status to NOT_SERVING for good, so the composition root closes it before the port: a
 * load balancer or client watching the health stops sending before the server stops.
 */
public final class ReadinessHealth implements AutoCloseable {
    /** How often readiness is read; a change reaches the health service within this. */
    public static final Duration POLL_EVERY = Duration.ofMillis(500);
    private static final Logger LOG = LoggerFactory.getLogger(ReadinessHealth.class);

    private final String nodeId;
    private final Supplier<Readiness> readiness;
    /** {@code ""} (the whole server) and the service names, each set alike. */
    private final List<String> names;
    private final HealthStatusManager health = new HealthStatusManager();
    /** Starts its thread at the first schedule ({@link #start()}), so an unstarted instance holds none. */
    private final ScheduledExecutorService poller = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hourglass-grpc-health");
        t.setDaemon(true);
        return t;
    });
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The status last set; read and written on the poller thread only. */
    private ServingStatus current = ServingStatus.NOT_SERVING;

    /**
     * @param readiness this node's readiness ({@code RaftNode::readiness}); it must not block
     * @param services the full names of the services whose status follows it ({@code hourglass.v1.Broker}, ...)
     */
    public ReadinessHealth(String nodeId, Supplier<Readiness> readiness, Collection<String> services) {
        this.nodeId = nodeId;
        this.readiness = readiness;
        List<String> all = new ArrayList<>();
        all.add(HealthStatusManager.SERVICE_NAME_ALL_SERVICES);
        all.addAll(services);
        this.names = List.copyOf(all);
        // The manager starts "" as SERVING: a node is not ready before it has looked.
        set(ServingStatus.NOT_SERVING);
    }

    /** The {@code grpc.health.v1.Health} service to add to the port. */
    public BindableService service() {
        return health.getHealthService();
    }

    /** Reads readiness now and then every {@link #POLL_EVERY}. */
    public void start() {
        poller.scheduleWithFixedDelay(this::poll, 0, POLL_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void poll() {
        Readiness r;
        try {
            r = readiness.get();
        } catch (RuntimeException e) { // a thrown task would end the schedule: count it as not ready
            r = new Readiness(false, "readiness unreadable: " + e);
        }
        ServingStatus status = r.ready() ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
        if (status != current) {
            LOG.info("node {}: gRPC health {} ({})", nodeId, status, r.detail());
            current = status;
            set(status);
        }
    }

    private void set(ServingStatus status) {
        names.forEach(name -> health.setStatus(name, status));
    }

    /**
     * Stops the reads; every status is NOT_SERVING from now on, whatever a read still under way finds.
     * A second call does nothing.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            poller.shutdownNow();
            health.enterTerminalState();
            LOG.info("node {}: gRPC health NOT_SERVING (shutting down)", nodeId);
        }
    }
}
