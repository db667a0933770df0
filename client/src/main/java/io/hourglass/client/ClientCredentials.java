package io.hourglass.client;

import io.grpc.CallCredentials;
import io.grpc.ChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.Executor;

/**
 * How a client proves who it is and checks whom it talks to (DESIGN §8): TLS (trusting
 * {@code caFile}, or the JVM's default CAs without one), an optional client certificate for
 * mutual TLS, and an optional bearer token sent with every call as
 * {@code authorization: Bearer <token>}. Applies to every channel the client opens, reconnects
 * included.
 *
 * @param tls use TLS; implied by {@code caFile} or {@code certFile}
 * @param caFile PEM CA certificates the servers' certificates must chain to, or null for the JVM's
 * @param certFile PEM client certificate (mutual TLS), or null
 * @param keyFile PEM PKCS#8 key of {@code certFile}, or null
 * @param token the bearer token, or null
 */
public record ClientCredentials(boolean tls, Path caFile, Path certFile, Path keyFile, String token) {
    /** Plain text, no token: the transport of a node with security off. */
    public static final ClientCredentials NONE = new ClientCredentials(false, null, null, null, null);
    private static final Metadata.Key<String> AUTHORIZATION =
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    /**
     * The token in a token file: its first line, stripped ({@code deploy/certs.sh}'s
     * {@code admin.token}, a file the CLI's {@code --token-file} names); empty for an empty file.
     */
    public static String readTokenFile(Path file) throws IOException {
        try (java.io.BufferedReader in = java.nio.file.Files.newBufferedReader(file)) {
            String first = in.readLine();
            return first == null ? "" : first.strip();
        }
    }

    public ClientCredentials {
        tls = tls || caFile != null || certFile != null;
        if ((certFile == null) != (keyFile == null)) {
            throw new IllegalArgumentException("a client certificate needs its key, and a key its certificate");
        }
        if (token != null) {
            token = token.strip();
            if (token.isEmpty()) {
                token = null;
            }
        }
    }

    public ClientCredentials withToken(String value) {
        return new ClientCredentials(tls, caFile, certFile, keyFile, value);
    }

    /** The gRPC channel credentials these stand for. */
    public ChannelCredentials channelCredentials() {
        ChannelCredentials transport;
        if (!tls) {
            transport = InsecureChannelCredentials.create();
        } else {
            try {
                TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
                if (caFile != null) {
                    b.trustManager(caFile.toFile());
                }
                if (certFile != null) {
                    b.keyManager(certFile.toFile(), keyFile.toFile());
                }
                transport = b.build();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the TLS files: " + e.getMessage(), e);
            }
        }
        return token == null ? transport : CompositeChannelCredentials.create(transport, new Bearer(token));
    }

    /** Never prints the token. */
    @Override
    public String toString() {
        return "ClientCredentials[tls=" + tls + ", ca=" + caFile + ", cert=" + certFile + ", token="
                + (token == null ? "none" : "set") + "]";
    }

    private static final class Bearer extends CallCredentials {
        private final String header;

        Bearer(String token) {
            this.header = "Bearer " + token;
        }

        @Override
        public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
            try {
                Metadata m = new Metadata();
                m.put(AUTHORIZATION, header);
                applier.apply(m);
            } catch (RuntimeException e) {
                applier.fail(Status.UNAUTHENTICATED.withDescription("cannot attach the token").withCause(e));
            }
        }
    }
}
