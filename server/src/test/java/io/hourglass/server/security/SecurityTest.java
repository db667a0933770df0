package io.hourglass.server.security;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.ClientCalls;
import io.hourglass.client.AccessDeniedException;
import io.hourglass.client.AdminClient;
import io.hourglass.client.ClientCredentials;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.HourglassClientException;
import io.hourglass.client.Message;
import io.hourglass.client.Subscription;
import io.hourglass.raft.tls.PeerPortGuard;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Security on a real three-node cluster with real TLS: certificates made by deploy/certs.sh,
 * mutual TLS between the nodes, TLS on the client and HTTP ports, tokens and grants replicated.
 * Each refusal comes with the right status, and nothing changes.
 */
@Timeout(300)
class SecurityTest {
    @TempDir
    static Path dir;
    private static TestCertificates certs;
    private static TestCertificates foreign;
    private static TestCluster cluster;
    private static HourglassClient admin;

    @BeforeAll
    static void start() throws Exception {
        certs = TestCertificates.make(dir.resolve("certs"), "admin", "alice");
        foreign = TestCertificates.make(dir.resolve("foreign"), "admin");
        cluster = TestCluster.start(dir.resolve("cluster"), 3, certs.nodeSettings());
        admin = client(token(certs.bootstrapToken()), cluster.targets());
    }

    @AfterAll
    static void stop() {
        if (admin != null) {
            admin.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static ClientCredentials token(String token) {
        return new ClientCredentials(true, certs.ca(), null, null, token);
    }

    private static HourglassClient client(ClientCredentials credentials, String servers) {
        return HourglassClient.builder().servers(servers.split(",")).credentials(credentials)
                .retryDeadline(Duration.ofSeconds(20)).build();
    }

    private static Status.Code code(Throwable t) {
        return AdminClient.statusCode(t);
    }

    private static long pending(String topic) {
        return admin.admin().topicStats(topic).getPending();
    }

    @Test
    void anAnonymousClientAndAWrongTokenAreUnauthenticatedAndPublishNothing() {
        try (HourglassClient anonymous = client(token(null), cluster.targets());
             HourglassClient wrong = client(token("hg_not-a-token-anyone-made"), cluster.targets())) {
            AccessDeniedException e = assertThrows(AccessDeniedException.class,
                    () -> anonymous.publish(Message.of("anon.t", "x")));
            assertEquals(Status.Code.UNAUTHENTICATED, code(e));
            assertTrue(e.getMessage().contains("no credentials"), e.getMessage());
            AccessDeniedException w = assertThrows(AccessDeniedException.class, () -> wrong.publish(Message.of("anon.t", "x")));
            assertEquals(Status.Code.UNAUTHENTICATED, code(w));
            assertTrue(w.getMessage().contains("unknown or revoked token"), w.getMessage());
            assertEquals(Status.Code.UNAUTHENTICATED, code(assertThrows(AccessDeniedException.class,
                    () -> anonymous.admin().listTopics())));
        }
        assertTrue(admin.admin().listTopics().stream().noneMatch(t -> t.getTopic().equals("anon.t")));
    }

    @Test
    void aPublishOnlyTokenPublishesWhereGrantedAndIsDeniedConsumingAndPurging() throws Exception {
        String token = admin.admin().createToken("publisher");
        admin.admin().addGrant("publisher", "publish", "orders.*");
        try (HourglassClient publisher = client(token(token), cluster.targets())) {
            publisher.publish(Message.of("orders.eu", "o-1"));
            assertEquals(1, pending("orders.eu"));

            AccessDeniedException other = assertThrows(AccessDeniedException.class,
                    () -> publisher.publish(Message.of("billing", "b-1")));
            assertEquals(Status.Code.PERMISSION_DENIED, code(other));
            assertTrue(other.getMessage().contains("publisher lacks the publish permission on 'billing'"), other.getMessage());

            AccessDeniedException purge = assertThrows(AccessDeniedException.class,
                    () -> publisher.admin().purgeTopic("orders.eu"));
            assertEquals(Status.Code.PERMISSION_DENIED, code(purge));
            assertTrue(purge.getMessage().contains("admin permission on *"), purge.getMessage());

            List<String> got = new CopyOnWriteArrayList<>();
            Subscription sub = publisher.subscribe("orders.eu", "g", (m, ctx) -> got.add(m.payloadUtf8()));
            Throwable ended = assertThrows(ExecutionException.class, () -> sub.terminated().get(30, TimeUnit.SECONDS))
                    .getCause();
            assertEquals(Status.Code.PERMISSION_DENIED, code(ended), String.valueOf(ended));
            assertTrue(got.isEmpty());
        }
        assertEquals(1, pending("orders.eu"), "nothing was consumed or purged");
    }

    @Test
    void aRevokedTokenIsRefusedByEveryNode() {
        String token = admin.admin().createToken("temp");
        admin.admin().addGrant("temp", "publish", "temp.t");
        for (TestNode node : cluster.nodes()) {
            try (HourglassClient c = client(token(token), node.target())) {
                c.publish(Message.of("temp.t", "before"));
            }
        }
        admin.admin().revokeToken("temp");
        for (TestNode node : cluster.nodes()) {
            try (HourglassClient c = client(token(token), node.target())) {
                await("node " + node.id() + " refuses the revoked token").atMost(Duration.ofSeconds(10)).until(() -> {
                    try {
                        c.publish(Message.of("temp.t", "after"));
                        return false;
                    } catch (AccessDeniedException e) {
                        return code(e) == Status.Code.UNAUTHENTICATED;
                    }
                });
            }
        }
        assertEquals(3, pending("temp.t"), "only the publishes before the revocation");
        assertEquals(Status.Code.NOT_FOUND, code(assertThrows(HourglassClientException.class,
                () -> admin.admin().revokeToken("temp"))));
    }

    @Test
    void aClientCertificateAuthenticatesAsItsCommonNameAndConsumesWhereGranted() throws Exception {
        admin.admin().addGrant("alice", "consume", "alice.*");
        admin.publish(Message.of("alice.inbox", "hello"));
        ClientCredentials mtls = new ClientCredentials(true, certs.ca(), certs.clientCert("alice"),
                certs.clientKey("alice"), null);
        try (HourglassClient alice = client(mtls, cluster.targets())) {
            assertEquals("alice", alice.admin().whoAmI().getPrincipal());
            CompletableFuture<String> got = new CompletableFuture<>();
            try (Subscription sub = alice.subscribe("alice.inbox", "g", (m, ctx) -> {
                ctx.ack();
                got.complete(m.payloadUtf8());
            })) {
                assertEquals("hello", got.get(30, TimeUnit.SECONDS));
            }
            AccessDeniedException publish = assertThrows(AccessDeniedException.class,
                    () -> alice.publish(Message.of("alice.inbox", "x")));
            assertEquals(Status.Code.PERMISSION_DENIED, code(publish));
        }
    }

    @Test
    void roomsNeedTheRoomsPermissionOnEachRoom() {
        String token = admin.admin().createToken("roomer");
        admin.admin().addGrant("roomer", "rooms", "lobby");
        try (HourglassClient roomer = client(token(token), cluster.targets())) {
            roomer.rooms().send("lobby", "hi", 0);
            AccessDeniedException vault = assertThrows(AccessDeniedException.class,
                    () -> roomer.rooms().send("vault", "x", 0));
            assertEquals(Status.Code.PERMISSION_DENIED, code(vault));
            assertTrue(vault.getMessage().contains("lacks the rooms permission on 'vault'"), vault.getMessage());
            assertEquals(Status.Code.PERMISSION_DENIED, code(assertThrows(AccessDeniedException.class,
                    () -> roomer.rooms().configure("lobby", true, Duration.ofSeconds(5)))), "configuring needs admin");
        }
        assertTrue(admin.rooms().list(0, 1000).stream().noneMatch(r -> r.room().equals("vault")), "nothing sent to vault");
    }

    @Test
    void aPlainTextClientOnTheTlsPortIsRefused() {
        try (HourglassClient plain = HourglassClient.builder().servers(cluster.node(1).target())
                .retryDeadline(Duration.ofSeconds(2)).build()) {
            HourglassClientException e = assertThrows(HourglassClientException.class,
                    () -> plain.publish(Message.of("plain.t", "x")));
            assertEquals(Status.Code.UNAVAILABLE, code(e), e.getMessage());
        }
        assertTrue(admin.admin().listTopics().stream().noneMatch(t -> t.getTopic().equals("plain.t")));
    }

    @Test
    void theRaftPortRefusesNoCertificateAndAForeignOneAndAdmitsAPeer() throws Exception {
        String raft = "127.0.0.1:" + cluster.settingsOf(cluster.node(1)).get("raft.port");
        String fetch = "hourglass.replica.Replica/FetchCheckpoint"; // a copy of every stored message
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        Logger guardLog = (Logger) LoggerFactory.getLogger(PeerPortGuard.class);
        guardLog.addAppender(log);
        long refusedBefore = cluster.node(1).node().raft().counters().refusedPeerCalls();
        try {
            assertEquals(Status.Code.UNAUTHENTICATED, raftCall(raft, fetch, TlsChannelCredentials.newBuilder()
                    .trustManager(certs.peerCa().toFile()).build()), "no client certificate");
            // A client certificate is not one the peer CA signed, so TLS does not even offer it.
            assertEquals(Status.Code.UNAUTHENTICATED, raftCall(raft, fetch, TlsChannelCredentials.newBuilder()
                    .trustManager(certs.peerCa().toFile()).keyManager(certs.clientCert("admin").toFile(),
                            certs.clientKey("admin").toFile()).build()), "a client certificate, not a peer's");
        } finally {
            guardLog.detachAppender(log);
        }
        assertEquals(refusedBefore + 2, cluster.node(1).node().raft().counters().refusedPeerCalls(), "counted");
        assertTrue(log.list.stream().anyMatch(e -> e.getLevel() == Level.WARN
                && e.getFormattedMessage().contains("presented no certificate")
                && e.getFormattedMessage().contains("127.0.0.1")), "logged with the caller's address: " + log.list);
        Path foreignPeer = foreign.peerCert();
        assertEquals(Status.Code.UNAVAILABLE, raftCall(raft, fetch, TlsChannelCredentials.newBuilder()
                .trustManager(certs.peerCa().toFile()).keyManager(foreignPeer.toFile(), foreign.peerKey().toFile())
                .build()), "a certificate of another CA fails the handshake");
        Status.Code peer = raftCall(raft, TlsChannelCredentials.newBuilder().trustManager(certs.peerCa().toFile())
                .keyManager(certs.peerCert().toFile(), certs.peerKey().toFile()).build());
        assertEquals(Status.Code.UNIMPLEMENTED, peer, "a peer gets through TLS (to a method that does not exist)");
    }

    /**
     * Calls a method the Raft port does not serve: UNIMPLEMENTED once it admits us, UNAVAILABLE if TLS
     * refuses us, UNAUTHENTICATED if we presented no certificate.
     */
    private static Status.Code raftCall(String target, io.grpc.ChannelCredentials credentials) throws InterruptedException {
        return raftCall(target, "test.Nothing/Call", credentials);
    }

    private static Status.Code raftCall(String target, String fullMethod, io.grpc.ChannelCredentials credentials)
            throws InterruptedException {
        ManagedChannel channel = Grpc.newChannelBuilder(target, credentials).build();
        try {
            MethodDescriptor<InputStream, InputStream> method = MethodDescriptor.<InputStream, InputStream>newBuilder()
                    .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName(fullMethod)
                    .setRequestMarshaller(new Raw()).setResponseMarshaller(new Raw()).build();
            ClientCalls.blockingUnaryCall(channel, method, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                    new ByteArrayInputStream(new byte[0]));
            return Status.Code.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    private static final class Raw implements MethodDescriptor.Marshaller<InputStream> {
        @Override
        public InputStream stream(InputStream value) {
            return value;
        }

        @Override
        public InputStream parse(InputStream stream) {
            return stream;
        }
    }

    @Test
    void httpsMetricsNeedATokenAndTheProbesDoNot() throws Exception {
        HttpClient http = HttpClient.newBuilder().sslContext(TestCertificates.trusting(certs.ca())).build();
        String base = "https://127.0.0.1:" + cluster.node(1).httpPort();
        assertEquals(401, http.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
        HttpResponse<String> metrics = http.send(HttpRequest.newBuilder(URI.create(base + "/metrics"))
                .header("Authorization", "Bearer " + certs.bootstrapToken()).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, metrics.statusCode());
        assertTrue(metrics.body().contains("hourglass_security_refused_total"), "refusals are counted");
        assertEquals(200, http.send(HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
                HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    @Test
    void securityHalfConfiguredRefusesToStart() {
        Map<String, String> half = new HashMap<>(certs.nodeSettings());
        half.remove("tls.peerCertFile");
        half.remove("tls.peerKeyFile");
        half.remove("tls.peerCaFile");
        Exception e = assertThrows(Exception.class, () -> io.hourglass.server.config.NodeConfig.from(
                new io.hourglass.core.config.Settings(half)));
        assertTrue(e.getMessage().contains("security.enabled=true needs"), e.getMessage());
    }
}
