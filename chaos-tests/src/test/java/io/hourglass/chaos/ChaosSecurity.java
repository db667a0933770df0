package io.hourglass.chaos;

import io.hourglass.client.ClientCredentials;
import io.hourglass.server.security.TestCertificates;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;

/**
 * Security on for a process cluster: certificates and a bootstrap token made by the shipped
 * {@code deploy/certs.sh} in {@code dir}, one node certificate (CN n1) that every node presents,
 * its SANs naming every address a node may have; the nodes get the settings as
 * {@code HOURGLASS_*} variables, clients the CA and the bootstrap token.
 */
public record ChaosSecurity(Path dir, String token) {
    /** Whether {@code -Dchaos.secure=true} asks for it. */
    public static boolean requested() {
        return Boolean.getBoolean("chaos.secure");
    }

    public static ChaosSecurity make(Path dir, Collection<String> hosts) {
        try {
            TestCertificates certs = TestCertificates.make(dir, hosts);
            return new ChaosSecurity(dir, certs.bootstrapToken());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The node settings, as the environment variables hourglass-server reads. */
    public Map<String, String> env() {
        Path node = dir.resolve("n1");
        return Map.of(
                "HOURGLASS_SECURITY_ENABLED", "true",
                "HOURGLASS_SECURITY_BOOTSTRAPTOKENFILE", dir.resolve("admin.token").toString(),
                "HOURGLASS_TLS_CERTFILE", node.resolve("node.pem").toString(),
                "HOURGLASS_TLS_KEYFILE", node.resolve("node.key").toString(),
                "HOURGLASS_TLS_CAFILE", dir.resolve("ca.pem").toString(),
                "HOURGLASS_TLS_CLIENTAUTH", "optional",
                "HOURGLASS_TLS_PEERCERTFILE", node.resolve("peer.pem").toString(),
                "HOURGLASS_TLS_PEERKEYFILE", node.resolve("peer.key").toString(),
                "HOURGLASS_TLS_PEERCAFILE", dir.resolve("peer-ca.pem").toString());
    }

    /** TLS trusting the cluster's CA, authenticated as admin (the bootstrap token). */
    public ClientCredentials credentials() {
        return new ClientCredentials(true, dir.resolve("ca.pem"), null, null, token);
    }

    /** An HTTP client for the nodes' HTTPS port. */
    public HttpClient http() {
        try {
            return HttpClient.newBuilder().sslContext(TestCertificates.trusting(dir.resolve("ca.pem")))
                    .connectTimeout(Duration.ofSeconds(1)).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
