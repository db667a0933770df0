package io.hourglass.server.security;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hourglass.client.AdminClient;
import io.hourglass.client.ClientCredentials;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.HourglassClientException;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's certificate and key replaced on disk are served without a restart: after the swap a
 * client trusting only the new CA gets in and one trusting only the old CA no longer does.
 */
@Timeout(120)
class CertificateReloadTest {
    @TempDir
    Path dir;

    @Test
    void aReplacedCertificateIsServedWithoutARestart() throws Exception {
        TestCertificates old = TestCertificates.make(dir.resolve("old"));
        TestCertificates fresh = TestCertificates.make(dir.resolve("new"));
        Map<String, String> settings = new HashMap<>(old.nodeSettings());
        settings.put("tls.reloadEvery", "1s");
        String token = old.bootstrapToken();
        try (TestNode node = TestNode.start(dir.resolve("node"), settings)) {
            assertEquals("admin", whoAmI(node, old.ca(), token));

            Path served = old.dir().resolve("n1");
            replace(fresh.dir().resolve("n1").resolve("node.pem"), served.resolve("node.pem"));
            replace(fresh.dir().resolve("n1").resolve("node.key"), served.resolve("node.key"));

            await("the new certificate is served").atMost(Duration.ofSeconds(30))
                    .ignoreExceptionsInstanceOf(HourglassClientException.class)
                    .until(() -> "admin".equals(whoAmI(node, fresh.ca(), token)));
            HourglassClientException e = org.junit.jupiter.api.Assertions.assertThrows(HourglassClientException.class,
                    () -> whoAmI(node, old.ca(), token));
            assertEquals(io.grpc.Status.Code.UNAVAILABLE, AdminClient.statusCode(e), e.getMessage());
        }
    }

    private static String whoAmI(TestNode node, Path ca, String token) {
        try (HourglassClient c = HourglassClient.builder().servers(node.target())
                .credentials(new ClientCredentials(true, ca, null, null, token)).retryDeadline(Duration.ofSeconds(2))
                .build()) {
            return c.admin().whoAmI().getPrincipal();
        }
    }

    private static void replace(Path from, Path to) throws Exception {
        Path tmp = to.resolveSibling(to.getFileName() + ".tmp");
        Files.copy(from, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
