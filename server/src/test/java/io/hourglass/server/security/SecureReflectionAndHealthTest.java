package io.hourglass.server.security;

import static io.hourglass.server.testing.StandardServices.health;
import static io.hourglass.server.testing.StandardServices.listServices;
import static io.hourglass.server.testing.StandardServices.listServicesV1Alpha;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.client.ChannelFactory;
import io.hourglass.client.ClientCredentials;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.ServerAddress;
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
 * With security on, server reflection needs credentials like every other call — any principal, no
 * grant — while gRPC health answers without any, as /healthz and /readyz do: a kubelet's probe
 * presents none.
 */
@Timeout(180)
class SecureReflectionAndHealthTest {
    @TempDir
    Path dir;
    private TestCertificates certs;
    private TestNode node;
    private final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        certs = TestCertificates.make(dir.resolve("certs"), "admin");
        node = TestNode.start(dir.resolve("n1"), certs.nodeSettings());
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (ManagedChannel c : channels) {
            c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (node != null) {
            node.close();
        }
    }

    /** A TLS channel to the node that sends {@code token} with each call (null: no token). */
    private ManagedChannel channel(String token) {
        ManagedChannel c = ChannelFactory.secured(new ClientCredentials(true, certs.ca(), null, null, token))
                .open(ServerAddress.parse(node.target()));
        channels.add(c);
        return c;
    }

    private static Status.Code refusal(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
    }

    @Test
    void reflectionNeedsCredentialsButNoGrant() throws Exception {
        ManagedChannel anonymous = channel(null);
        assertEquals(Status.Code.UNAUTHENTICATED, refusal(() -> listServices(anonymous)));
        assertEquals(Status.Code.UNAUTHENTICATED, refusal(() -> listServicesV1Alpha(anonymous)));
        ManagedChannel wrong = channel("hg_not-a-token-anyone-made");
        assertEquals(Status.Code.UNAUTHENTICATED, refusal(() -> listServices(wrong)));

        String viewer;
        try (HourglassClient admin = HourglassClient.builder().servers(node.target())
                .credentials(new ClientCredentials(true, certs.ca(), null, null, certs.bootstrapToken()))
                .retryDeadline(Duration.ofSeconds(20)).build()) {
            viewer = admin.admin().createToken("viewer"); // no grant at all
        }
        ManagedChannel withToken = channel(viewer);
        List<String> services = listServices(withToken);
        assertTrue(services.containsAll(List.of(BrokerGrpc.SERVICE_NAME, "hourglass.v1.Rooms", "hourglass.v1.Admin",
                "hourglass.v1.Security", "grpc.health.v1.Health")), "lists " + services);
        assertTrue(listServicesV1Alpha(withToken).contains(BrokerGrpc.SERVICE_NAME));
    }

    @Test
    void healthAnswersWithoutCredentials() {
        ManagedChannel anonymous = channel(null);
        await("the node serves").atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertEquals(ServingStatus.SERVING, health(anonymous, ""));
            assertEquals(ServingStatus.SERVING, health(anonymous, BrokerGrpc.SERVICE_NAME));
        });
        // A token sent anyway, even one no node knows, is not looked at.
        assertEquals(ServingStatus.SERVING, health(channel("hg_not-a-token-anyone-made"), ""));
    }
}
