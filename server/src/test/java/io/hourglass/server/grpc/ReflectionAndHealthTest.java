package io.hourglass.server.grpc;

import static io.hourglass.server.testing.StandardServices.health;
import static io.hourglass.server.testing.StandardServices.listServices;
import static io.hourglass.server.testing.StandardServices.listServicesV1Alpha;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.hourglass.api.v1.AdminGrpc;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.RoomsGrpc;
import io.hourglass.api.v1.SecurityGrpc;
import io.hourglass.server.testing.StreamRecorder;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Server reflection and gRPC health on a real node's client port, security off: reflection lists
 * every service, as {@code grpcurl list} shows it; health says SERVING for the server and each
 * Hourglass service once the node is ready, and a client watching it hears NOT_SERVING when the node
 * shuts down. (A node without a leader: {@code cluster.HealthWithoutLeaderTest}; with security on:
 * {@code security.SecureReflectionAndHealthTest}.)
 */
@Timeout(120)
class ReflectionAndHealthTest {
    private static final List<String> HOURGLASS_SERVICES = List.of(BrokerGrpc.SERVICE_NAME, RoomsGrpc.SERVICE_NAME,
            AdminGrpc.SERVICE_NAME, SecurityGrpc.SERVICE_NAME);

    @TempDir
    Path dir;
    private TestNode node;
    private ManagedChannel channel;

    @BeforeEach
    void start() {
        node = TestNode.start(dir);
        channel = ManagedChannelBuilder.forTarget(node.target()).usePlaintext().build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        node.close();
    }

    @Test
    void reflectionListsTheHourglassServicesInBothVersions() {
        assertEquals(List.of("hourglass.v1.Broker", "hourglass.v1.Rooms", "hourglass.v1.Admin", "hourglass.v1.Security"),
                HOURGLASS_SERVICES, "the names operators type");
        List<String> expected = new ArrayList<>(HOURGLASS_SERVICES);
        expected.addAll(List.of("grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                "grpc.reflection.v1alpha.ServerReflection"));
        List<String> v1 = listServices(channel);
        assertTrue(v1.containsAll(expected), "v1 lists " + v1);
        assertEquals(expected.size(), v1.size(), "nothing else: " + v1);
        List<String> v1alpha = listServicesV1Alpha(channel);
        assertEquals(v1.stream().sorted().toList(), v1alpha.stream().sorted().toList(), "both versions agree");
    }

    @Test
    void healthIsServingForTheServerAndEachServiceOnAReadyNode() {
        await("a ready node serves").atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertEquals(ServingStatus.SERVING, health(channel, ""));
            for (String service : HOURGLASS_SERVICES) {
                assertEquals(ServingStatus.SERVING, health(channel, service), service);
            }
        });
        assertTrue(node.node().raft().readiness().ready(), "and /readyz agrees");
        StatusRuntimeException unknown = assertThrows(StatusRuntimeException.class,
                () -> health(channel, "hourglass.v1.NoSuchService"));
        assertEquals(Status.Code.NOT_FOUND, unknown.getStatus().getCode());
    }

    @Test
    void aClientWatchingHealthHearsNotServingWhenTheNodeShutsDown() {
        StreamRecorder<HealthCheckResponse> watcher = new StreamRecorder<>();
        HealthGrpc.newStub(channel).watch(HealthCheckRequest.newBuilder().setService(BrokerGrpc.SERVICE_NAME).build(),
                watcher);
        watcher.awaitValue(r -> r.getStatus() == ServingStatus.SERVING);

        node.stop();
        List<ServingStatus> heard = watcher.values().stream().map(HealthCheckResponse::getStatus).toList();
        assertEquals(ServingStatus.NOT_SERVING, heard.get(heard.size() - 1),
                "NOT_SERVING reached the watcher before the port closed; it heard " + heard);
    }
}
