package io.hourglass.raft.tls;

import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import java.io.Closeable;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TLS key material from PEM files, reloaded when the files change (checked every
 * {@code reloadEvery}): a key manager with this side's certificate chain and PKCS#8 private key,
 * and, when a CA file is given, a trust manager that accepts certificates that CA signed. A
 * certificate the trust manager refuses (another CA, expired) is logged as a WARN naming its
 * subject, so a node or client knocking with the wrong certificate is visible.
 *
 * <p>The managers are plain JSSE ones: the client port's Netty, Ratis' shaded Netty and Jetty all
 * take them. A file that fails to parse at a reload keeps the previous material (grpc-util logs it).
 */
public final class PemTls implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(PemTls.class);

    private final String name;
    private final AdvancedTlsX509KeyManager keyManager = new AdvancedTlsX509KeyManager();
    private final X509ExtendedTrustManager trustManager;
    private final ScheduledExecutorService reloader;
    private final Path certFile;
    private final Path keyFile;
    private final Path caFile;
    private final AdvancedTlsX509TrustManager trust;
    private long certTime;
    private long keyTime;
    private long caTime;

    /**
     * @param name what the material is for, in log lines ("client port", "peer")
     * @param caFile the CA whose certificates the other side must present, or null to trust none
     * @param verifyHostNames a client checks the server's name against its certificate
     */
    public PemTls(String name, Path certFile, Path keyFile, Path caFile, Duration reloadEvery, boolean verifyHostNames)
            throws IOException {
        this.name = name;
        this.reloader = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hourglass-tls-reload-" + name.replace(' ', '-'));
            t.setDaemon(true);
            return t;
        });
        this.certFile = certFile;
        this.keyFile = keyFile;
        this.caFile = caFile;
        long every = Math.max(1, reloadEvery.toMillis());
        try {
            certTime = mtime(certFile);
            keyTime = mtime(keyFile);
            keyManager.updateIdentityCredentials(certFile.toFile(), keyFile.toFile());
            if (caFile == null) {
                trust = null;
                trustManager = null;
            } else {
                trust = AdvancedTlsX509TrustManager.newBuilder()
                        .setVerification(verifyHostNames
                                ? AdvancedTlsX509TrustManager.Verification.CERTIFICATE_AND_HOST_NAME_VERIFICATION
                                : AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
                        .build();
                caTime = mtime(caFile);
                trust.updateTrustCredentials(caFile.toFile());
                trustManager = new Logging(trust);
            }
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            close();
            throw new IOException(name + " TLS: cannot load " + certFile + " / " + keyFile
                    + (caFile == null ? "" : " / " + caFile) + ": " + e.getMessage(), e);
        }
        reloader.scheduleWithFixedDelay(this::reloadIfChanged, every, every, TimeUnit.MILLISECONDS);
        LOG.info("{} TLS: certificate {} (key {}){}, reloaded on change (checked every {} ms)", name, certFile, keyFile,
                caFile == null ? "" : ", trusting " + caFile, every);
    }

    /**
     * Loads the files again once their modification times moved (the reload thread). Certificate
     * and key go together: a pair caught half-replaced fails to load, keeps the previous material,
     * and is tried again at the next look.
     */
    private void reloadIfChanged() {
        try {
            long c = mtime(certFile);
            long k = mtime(keyFile);
            if (c != certTime || k != keyTime) {
                keyManager.updateIdentityCredentials(certFile.toFile(), keyFile.toFile());
                certTime = c;
                keyTime = k;
                LOG.info("{} TLS: reloaded certificate {} and key {}", name, certFile, keyFile);
            }
            if (caFile != null) {
                long a = mtime(caFile);
                if (a != caTime) {
                    trust.updateTrustCredentials(caFile.toFile());
                    caTime = a;
                    LOG.info("{} TLS: reloaded CA certificates {}", name, caFile);
                }
            }
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            LOG.warn("{} TLS: cannot reload ({}); the previous certificates stay in use", name, e.toString());
        }
    }

    private static long mtime(Path file) throws IOException {
        return java.nio.file.Files.getLastModifiedTime(file).toMillis();
    }

    public AdvancedTlsX509KeyManager keyManager() {
        return keyManager;
    }

    /** Null when no CA file was given. */
    public X509ExtendedTrustManager trustManager() {
        return trustManager;
    }

    @Override
    public void close() {
        reloader.shutdownNow();
    }

    /** Logs each refused certificate (subject and reason), then refuses it. */
    private final class Logging extends X509ExtendedTrustManager {
        private final X509ExtendedTrustManager delegate;

        Logging(X509ExtendedTrustManager delegate) {
            this.delegate = delegate;
        }

        /** One check of the delegate's. */
        private interface Check {
            void run() throws CertificateException;
        }

        private void check(X509Certificate[] chain, String side, Check check) throws CertificateException {
            try {
                check.run();
            } catch (CertificateException e) {
                String subject = chain == null || chain.length == 0 ? "(none)"
                        : chain[0].getSubjectX500Principal().getName();
                LOG.warn("{} TLS: refused the {} certificate of {}: {}", name, side, subject, e.getMessage());
                throw e;
            }
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            check(chain, "client", () -> delegate.checkClientTrusted(chain, authType, socket));
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            check(chain, "client", () -> delegate.checkClientTrusted(chain, authType, engine));
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            check(chain, "client", () -> delegate.checkClientTrusted(chain, authType));
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            check(chain, "server", () -> delegate.checkServerTrusted(chain, authType, socket));
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            check(chain, "server", () -> delegate.checkServerTrusted(chain, authType, engine));
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            check(chain, "server", () -> delegate.checkServerTrusted(chain, authType));
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return delegate.getAcceptedIssuers();
        }
    }
}
