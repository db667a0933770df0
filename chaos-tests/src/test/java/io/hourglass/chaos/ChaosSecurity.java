package io.hourglass.chaos;

import io.hourglass.client.ClientCredentials;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

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
        Path script = Path.of("..", "deploy", "certs.sh").toAbsolutePath().normalize();
        List<String> command = new ArrayList<>(List.of("bash", script.toString(), dir.toString(), "n1"));
        List<String> sans = hosts.stream().distinct().filter(h -> !h.equals("127.0.0.1") && !h.equals("localhost")).toList();
        if (!sans.isEmpty()) {
            command.addAll(List.of("--san", "n1=" + String.join(",", sans)));
        }
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("certs.sh failed: " + output);
            }
            return new ChaosSecurity(dir, Files.readAllLines(dir.resolve("admin.token")).get(0).strip());
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
        try (InputStream in = Files.newInputStream(dir.resolve("ca.pem"))) {
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return HttpClient.newBuilder().sslContext(ctx).connectTimeout(Duration.ofSeconds(1)).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
