package io.hourglass.server.config;

import io.hourglass.core.config.ConfigException;
import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.ConfigSection;
import io.hourglass.core.config.Settings;
import io.hourglass.raft.RaftConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Transport security and who may do what (DESIGN.md §8). {@code security.enabled=true} turns on
 * authentication and authorization and requires TLS on the client port, mutual TLS between nodes
 * and a bootstrap token: a node refuses to start with security half configured. TLS without
 * {@code security.enabled} encrypts but admits anyone.
 *
 * @param enabled {@link #ENABLED}
 * @param clientTls the client port's (and HTTPS's) certificate, or null for plain text
 * @param clientCaFile {@link #CA_FILE}, or null
 * @param clientAuth {@link #CLIENT_AUTH}
 * @param peerTls node-to-node mutual TLS, or null
 * @param bootstrapTokenFile {@link #BOOTSTRAP_TOKEN_FILE}, or null
 * @param superUsers {@link #SUPER_USERS}
 */
public record SecurityConfig(boolean enabled, ServerTls clientTls, Path clientCaFile, ClientAuth clientAuth,
                             RaftConfig.PeerTls peerTls, Path bootstrapTokenFile, Set<String> superUsers) {

    /** Whether the client port asks for client certificates. */
    public enum ClientAuth { NONE, OPTIONAL, REQUIRE }

    /** A server certificate and key (PEM), reloaded every {@code reloadEvery} when they change. */
    public record ServerTls(Path certFile, Path keyFile, Duration reloadEvery) {
    }

    public static final ConfigKey<Boolean> ENABLED = ConfigKey.flag(
            "security.enabled", false,
            "Authenticate every client (bearer token or client certificate) and authorize each request against "
                    + "the replicated grants, deny by default. Requires tls.certFile, tls.keyFile, tls.peerCertFile, "
                    + "tls.peerKeyFile, tls.peerCaFile and security.bootstrapTokenFile. Off: the node logs a WARN at "
                    + "start that it is open to anyone who can reach its ports.");
    public static final ConfigKey<String> BOOTSTRAP_TOKEN_FILE = ConfigKey.string(
            "security.bootstrapTokenFile", "",
            "A file holding one token (the first line) that authenticates as the principal `admin`, so a new "
                    + "cluster is closed from its first second; every node reads its own copy. Make more tokens with "
                    + "`hourglass token create`.");
    public static final ConfigKey<String> SUPER_USERS = ConfigKey.string(
            "security.superUsers", "admin",
            "Principals (comma separated) that hold every permission on every resource, whatever the grants say.");
    public static final ConfigKey<String> CERT_FILE = ConfigKey.string(
            "tls.certFile", "",
            "PEM certificate chain of the client gRPC port and of HTTPS; empty: plain text. TLS 1.3 and 1.2.");
    public static final ConfigKey<String> KEY_FILE = ConfigKey.string(
            "tls.keyFile", "",
            "PEM private key (PKCS#8, unencrypted) of tls.certFile.");
    public static final ConfigKey<String> CA_FILE = ConfigKey.string(
            "tls.caFile", "",
            "PEM CA certificates that sign client certificates, for tls.clientAuth. A client certificate's "
                    + "subject CN is its principal.");
    public static final ConfigKey<String> CLIENT_AUTH = ConfigKey.string(
            "tls.clientAuth", "none", SecurityConfig::parseClientAuth,
            "Client certificates on the client port: none, optional (asked for; a client may use a token "
                    + "instead) or require. optional and require need tls.caFile.");
    public static final ConfigKey<String> PEER_CERT_FILE = ConfigKey.string(
            "tls.peerCertFile", "",
            "PEM certificate of this node for mutual TLS with the other nodes on the Raft port (replication, "
                    + "its admin calls, checkpoint downloads); it must name the address peers dial (a SAN).");
    public static final ConfigKey<String> PEER_KEY_FILE = ConfigKey.string(
            "tls.peerKeyFile", "",
            "PEM private key (PKCS#8, unencrypted) of tls.peerCertFile.");
    public static final ConfigKey<String> PEER_CA_FILE = ConfigKey.string(
            "tls.peerCaFile", "",
            "PEM CA that signs every node's peer certificate and nothing else: a node presenting no certificate "
                    + "or one of another CA is refused (and logged).");
    public static final ConfigKey<Duration> RELOAD_EVERY = ConfigKey.duration(
            "tls.reloadEvery", "10s", "1s",
            "How often certificate, key and CA files are checked; changed files are loaded without a restart.");

    public static final ConfigSection SECTION = ConfigSection.of("Security and TLS", ENABLED, BOOTSTRAP_TOKEN_FILE,
            SUPER_USERS, CERT_FILE, KEY_FILE, CA_FILE, CLIENT_AUTH, PEER_CERT_FILE, PEER_KEY_FILE, PEER_CA_FILE,
            RELOAD_EVERY);

    public SecurityConfig {
        superUsers = Set.copyOf(superUsers);
        if (clientAuth != ClientAuth.NONE && (clientTls == null || clientCaFile == null)) {
            throw new ConfigException("tls.clientAuth=" + clientAuth.name().toLowerCase()
                    + " needs tls.certFile, tls.keyFile and tls.caFile");
        }
        if (enabled && (clientTls == null || peerTls == null || bootstrapTokenFile == null)) {
            throw new ConfigException("security.enabled=true needs tls.certFile and tls.keyFile (client port), "
                    + "tls.peerCertFile, tls.peerKeyFile and tls.peerCaFile (between nodes) and "
                    + "security.bootstrapTokenFile; missing: " + missing(clientTls, peerTls, bootstrapTokenFile));
        }
    }

    private static String missing(ServerTls clientTls, RaftConfig.PeerTls peerTls, Path bootstrap) {
        StringBuilder b = new StringBuilder();
        if (clientTls == null) {
            b.append("client TLS ");
        }
        if (peerTls == null) {
            b.append("peer TLS ");
        }
        if (bootstrap == null) {
            b.append("bootstrap token ");
        }
        return b.toString().trim();
    }

    public static SecurityConfig from(Settings s) {
        Duration reload = RELOAD_EVERY.read(s);
        Path cert = file(s, CERT_FILE);
        Path key = file(s, KEY_FILE);
        ServerTls clientTls = pair(cert, key, CERT_FILE, KEY_FILE) ? new ServerTls(cert, key, reload) : null;
        Path peerCert = file(s, PEER_CERT_FILE);
        Path peerKey = file(s, PEER_KEY_FILE);
        Path peerCa = file(s, PEER_CA_FILE);
        RaftConfig.PeerTls peerTls = null;
        if (peerCert != null || peerKey != null || peerCa != null) {
            if (peerCert == null || peerKey == null || peerCa == null) {
                throw new ConfigException("tls.peerCertFile, tls.peerKeyFile and tls.peerCaFile go together");
            }
            peerTls = new RaftConfig.PeerTls(peerCert, peerKey, peerCa, reload);
        }
        Set<String> supers = Arrays.stream(SUPER_USERS.read(s).split(",")).map(String::trim)
                .filter(p -> !p.isEmpty()).collect(Collectors.toSet());
        return new SecurityConfig(ENABLED.read(s), clientTls, file(s, CA_FILE),
                ClientAuth.valueOf(CLIENT_AUTH.read(s).trim().toUpperCase()), peerTls, file(s, BOOTSTRAP_TOKEN_FILE),
                supers);
    }

    private static boolean pair(Path cert, Path key, ConfigKey<String> certKey, ConfigKey<String> keyKey) {
        if ((cert == null) != (key == null)) {
            throw new ConfigException(certKey.name() + " and " + keyKey.name() + " go together");
        }
        return cert != null;
    }

    /** The file a key names, which must exist and be readable; null when the key is empty. */
    private static Path file(Settings s, ConfigKey<String> key) {
        String value = key.read(s).trim();
        if (value.isEmpty()) {
            return null;
        }
        Path path = Path.of(value).toAbsolutePath();
        if (!Files.isReadable(path)) {
            throw new ConfigException(key.name() + ": cannot read " + path);
        }
        return path;
    }

    private static void parseClientAuth(String value) {
        try {
            ClientAuth.valueOf(value.trim().toUpperCase());
        } catch (IllegalArgumentException e) {
            throw new ConfigException("tls.clientAuth must be none, optional or require, not '"
                    + io.hourglass.core.HourglassException.excerpt(value) + "'");
        }
    }
}
