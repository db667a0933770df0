package io.hourglass.server.security;

import io.hourglass.client.ClientCredentials;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Real certificates for tests, made by the shipped {@code deploy/certs.sh} (openssl): a client CA
 * and a peer CA of their own, node {@code n1}'s certificates (every test node uses them: their
 * SANs name 127.0.0.1 and localhost), client certificates and the bootstrap token.
 */
public record TestCertificates(Path dir) {
    /** Runs {@code deploy/certs.sh DIR n1 --client ...}. */
    public static TestCertificates make(Path dir, String... clients) throws IOException, InterruptedException {
        return make(dir, List.of(), clients);
    }

    /**
     * Runs {@code deploy/certs.sh DIR n1 [--san n1=SANS] --client ...}: {@code sans} are addresses
     * besides 127.0.0.1 and localhost (which every node certificate names) that n1's certificates name.
     */
    public static TestCertificates make(Path dir, Collection<String> sans, String... clients)
            throws IOException, InterruptedException {
        Path script = Path.of("..", "deploy", "certs.sh").toAbsolutePath().normalize();
        List<String> command = new ArrayList<>(List.of("bash", script.toString(), dir.toString(), "n1"));
        List<String> extra = sans.stream().distinct().filter(h -> !h.equals("127.0.0.1") && !h.equals("localhost"))
                .toList();
        if (!extra.isEmpty()) {
            command.addAll(List.of("--san", "n1=" + String.join(",", extra)));
        }
        for (String c : clients) {
            command.add("--client");
            command.add(c);
        }
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("certs.sh failed: " + output);
        }
        return new TestCertificates(dir);
    }

    public Path ca() {
        return dir.resolve("ca.pem");
    }

    public Path clientCert(String name) {
        return dir.resolve("clients").resolve(name + ".pem");
    }

    public Path clientKey(String name) {
        return dir.resolve("clients").resolve(name + ".key");
    }

    public Path peerCert() {
        return dir.resolve("n1").resolve("peer.pem");
    }

    public Path peerKey() {
        return dir.resolve("n1").resolve("peer.key");
    }

    public Path peerCa() {
        return dir.resolve("peer-ca.pem");
    }

    public String bootstrapToken() throws IOException {
        return ClientCredentials.readTokenFile(dir.resolve("admin.token"));
    }

    /** A JSSE context trusting only the certificates in the PEM file {@code ca} (for HTTPS clients). */
    public static SSLContext trusting(Path ca) throws IOException, GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        try (InputStream in = Files.newInputStream(ca)) {
            ks.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    /** The settings of a node with security on, client certificates optional. */
    public Map<String, String> nodeSettings() {
        return Map.of(
                "security.enabled", "true",
                "security.bootstrapTokenFile", dir.resolve("admin.token").toString(),
                "tls.certFile", dir.resolve("n1").resolve("node.pem").toString(),
                "tls.keyFile", dir.resolve("n1").resolve("node.key").toString(),
                "tls.caFile", ca().toString(),
                "tls.clientAuth", "optional",
                "tls.peerCertFile", peerCert().toString(),
                "tls.peerKeyFile", peerKey().toString(),
                "tls.peerCaFile", peerCa().toString());
    }
}
