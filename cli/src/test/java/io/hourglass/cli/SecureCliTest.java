package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hourglass.server.security.TestCertificates;
import io.hourglass.server.testing.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI against a real 3-node cluster with security on (real TLS, certificates from
 * deploy/certs.sh): tokens and grants made with the CLI, exit 8 without or with a revoked token,
 * exit 9 without the permission, and a user's publish / confirmed consume of 200 messages.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class SecureCliTest {
    private final ObjectMapper json = new ObjectMapper();
    private TestCertificates certs;
    private TestCluster cluster;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        certs = TestCertificates.make(dir.resolve("certs"));
        cluster = TestCluster.start(dir.resolve("cluster"), 3, certs.nodeSettings());
    }

    @AfterAll
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private Cli.Result run(String token, String... args) {
        List<String> all = new ArrayList<>(List.of("--servers", cluster.targets(), "--deadline", "20s",
                "--tls-ca", certs.ca().toString()));
        if (token != null) {
            all.addAll(List.of("--token", token));
        }
        all.addAll(List.of(args));
        return Cli.runWith(ClientFactory.grpc(), "", all.toArray(new String[0]));
    }

    private String admin() throws Exception {
        return certs.bootstrapToken();
    }

    @Test
    void aUserMadeWithTheCliPublishesAndConsumesWhereGrantedAndIsRefusedElsewhere() throws Exception {
        Cli.Result created = run(admin(), "--output", "json", "token", "create", "orders-app");
        assertEquals(0, created.exitCode(), created.err());
        String token = json.readTree(created.outLines().get(0)).get("token").asText();
        assertTrue(token.startsWith("hg_") && token.length() > 40, token);

        assertEquals(0, run(admin(), "grant", "add", "orders-app", "publish", "orders.*").exitCode());
        Cli.Result published = run(token, "publish", "orders.eu", "hello", "--count", "200");
        assertEquals(0, published.exitCode(), published.err());

        Cli.Result denied = run(token, "publish", "billing", "x");
        assertEquals(9, denied.exitCode(), denied.err());
        assertEquals(1, denied.err().strip().lines().count(), denied.err());
        assertTrue(denied.err().contains("lacks the publish permission on 'billing'"), denied.err());

        Cli.Result noConsume = run(token, "consume", "orders.eu", "--group", "g", "--count", "200");
        assertEquals(9, noConsume.exitCode(), noConsume.err());
        assertEquals(0, run(admin(), "grant", "add", "orders-app", "consume", "orders.*").exitCode());
        Cli.Result consumed = run(token, "--output", "json", "consume", "orders.eu", "--group", "g", "--count", "200",
                "--confirm");
        assertEquals(0, consumed.exitCode(), consumed.err());
        assertEquals(200, consumed.outLines().size(), consumed.out());

        Cli.Result purge = run(token, "topic", "purge", "orders.eu", "--yes");
        assertEquals(9, purge.exitCode(), purge.err());

        Cli.Result grants = run(admin(), "--output", "json", "grant", "list", "--principal", "orders-app");
        assertEquals(2, grants.outLines().size(), grants.out());

        assertEquals(0, run(admin(), "token", "revoke", "orders-app").exitCode());
        Cli.Result revoked = run(token, "publish", "orders.eu", "after");
        assertEquals(8, revoked.exitCode(), revoked.err());
        assertTrue(revoked.err().contains("unknown or revoked token"), revoked.err());
    }

    @Test
    void noTokenIsExit8AndATokenFileWorks(@TempDir Path dir) throws Exception {
        Cli.Result anonymous = run(null, "topic", "list");
        assertEquals(8, anonymous.exitCode(), anonymous.err());
        assertTrue(anonymous.err().contains("no credentials"), anonymous.err());

        Path file = Files.writeString(dir.resolve("token"), admin() + "\n");
        Cli.Result listed = run(null, "--token-file", file.toString(), "token", "list");
        assertEquals(0, listed.exitCode(), listed.err());
        Cli.Result who = run(null, "--token-file", file.toString(), "--output", "json", "token", "whoami");
        assertEquals(0, who.exitCode(), who.err());
        assertEquals("admin", json.readTree(who.outLines().get(0)).get("principal").asText());
        assertEquals("on", json.readTree(who.outLines().get(0)).get("security").asText());
    }
}
