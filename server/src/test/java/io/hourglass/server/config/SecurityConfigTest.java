package io.hourglass.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.config.ConfigException;
import io.hourglass.core.config.Settings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The security keys: complete sets only, files that exist, one clear line for each mistake. */
class SecurityConfigTest {
    @TempDir
    Path dir;
    private final Map<String, String> full = new HashMap<>();

    @BeforeEach
    void files() throws IOException {
        for (String name : new String[] {"node.pem", "node.key", "ca.pem", "peer.pem", "peer.key", "peer-ca.pem", "token"}) {
            Files.writeString(dir.resolve(name), "x");
        }
        full.put("security.enabled", "true");
        full.put("security.bootstrapTokenFile", dir.resolve("token").toString());
        full.put("tls.certFile", dir.resolve("node.pem").toString());
        full.put("tls.keyFile", dir.resolve("node.key").toString());
        full.put("tls.caFile", dir.resolve("ca.pem").toString());
        full.put("tls.clientAuth", "require");
        full.put("tls.peerCertFile", dir.resolve("peer.pem").toString());
        full.put("tls.peerKeyFile", dir.resolve("peer.key").toString());
        full.put("tls.peerCaFile", dir.resolve("peer-ca.pem").toString());
        full.put("security.superUsers", "admin, ops ,");
        full.put("tls.reloadEvery", "2s");
    }

    private static SecurityConfig read(Map<String, String> values) {
        return SecurityConfig.from(new Settings(values));
    }

    @Test
    void theDefaultIsOffAndPlainText() {
        SecurityConfig c = read(Map.of());
        assertFalse(c.enabled());
        assertNull(c.clientTls());
        assertNull(c.peerTls());
        assertEquals(SecurityConfig.ClientAuth.NONE, c.clientAuth());
        assertEquals(Set.of("admin"), c.superUsers());
    }

    @Test
    void aFullSetTurnsEverythingOn() {
        SecurityConfig c = read(full);
        assertTrue(c.enabled());
        assertEquals(dir.resolve("node.pem"), c.clientTls().certFile());
        assertEquals(Duration.ofSeconds(2), c.clientTls().reloadEvery());
        assertEquals(dir.resolve("peer-ca.pem"), c.peerTls().caFile());
        assertEquals(SecurityConfig.ClientAuth.REQUIRE, c.clientAuth());
        assertEquals(Set.of("admin", "ops"), c.superUsers());
    }

    @Test
    void securityWithoutPeerTlsOrBootstrapTokenRefusesToStart() {
        Map<String, String> noPeer = new HashMap<>(full);
        noPeer.remove("tls.peerCertFile");
        assertTrue(assertThrows(ConfigException.class, () -> read(noPeer)).getMessage()
                .contains("tls.peerCertFile, tls.peerKeyFile and tls.peerCaFile go together"));
        Map<String, String> noToken = new HashMap<>(full);
        noToken.remove("security.bootstrapTokenFile");
        String m = assertThrows(ConfigException.class, () -> read(noToken)).getMessage();
        assertTrue(m.startsWith("security.enabled=true needs") && m.endsWith("missing: bootstrap token"), m);
    }

    @Test
    void clientCertificatesNeedACaAndAMissingFileIsNamed() {
        Map<String, String> noCa = new HashMap<>(full);
        noCa.remove("tls.caFile");
        assertTrue(assertThrows(ConfigException.class, () -> read(noCa)).getMessage()
                .startsWith("tls.clientAuth=require needs"));
        Map<String, String> missing = new HashMap<>(full);
        missing.put("tls.certFile", dir.resolve("nope.pem").toString());
        assertTrue(assertThrows(ConfigException.class, () -> read(missing)).getMessage()
                .startsWith("tls.certFile: cannot read"));
        Map<String, String> bad = new HashMap<>(full);
        bad.put("tls.clientAuth", "sometimes");
        assertTrue(assertThrows(ConfigException.class, () -> read(bad)).getMessage().contains("none, optional or require"));
    }
}
