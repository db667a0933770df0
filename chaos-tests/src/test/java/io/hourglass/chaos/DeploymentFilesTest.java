package io.hourglass.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The deployment files under {@code deploy/} (systemd, container, Kubernetes) agree with the code:
 * every {@code HOURGLASS_*} variable names a key documented in the shipped
 * {@code hourglass.properties} (the server silently ignores a variable that names no key), peer
 * lists have the {@code id=host:raftPort:grpcPort} form and name the nodes that use them, and the
 * ports and probe paths are the node's own. Plain line and regex parsing: no container engine or
 * YAML library is needed. None of these files is run here.
 */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
final class DeploymentFilesTest {
    private static final Path DEPLOY = module().resolveSibling("deploy").normalize();
    /** Variables the scripts read that are not configuration keys. */
    private static final Set<String> NOT_CONFIG = Set.of("HOURGLASS_JAVA_OPTS", "HOURGLASS_SERVERS");
    private static final Pattern PEER = Pattern.compile("([A-Za-z0-9_.-]+)=([A-Za-z0-9_.-]+):(\\d+):(\\d+)");
    private static final Pattern ENV_NAME = Pattern.compile("\\b(HOURGLASS_[A-Z0-9_]+)\\b");

    private static Path module() {
        return Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
    }

    private static String read(String relative) {
        Path file = DEPLOY.resolve(relative);
        assertTrue(Files.isRegularFile(file), () -> "missing " + file);
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every key of the shipped config file with its documented default ({@code #key=value} lines). */
    private static Map<String, String> documentedKeys() {
        Map<String, String> keys = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^#?([a-z][A-Za-z]*(?:\\.[A-Za-z]+)+)=(.*)$")
                .matcher(read("src/main/conf/hourglass.properties"));
        while (m.find()) {
            keys.put(m.group(1), m.group(2).trim());
        }
        assertTrue(keys.size() > 20, () -> "too few keys found in hourglass.properties: " + keys.keySet());
        return keys;
    }

    private static String keyOf(String envVar, Map<String, String> keys) {
        String dotted = envVar.substring("HOURGLASS_".length()).replace('_', '.').toLowerCase(Locale.ROOT);
        return keys.keySet().stream().filter(k -> k.toLowerCase(Locale.ROOT).equals(dotted)).findFirst().orElse(null);
    }

    private static List<String> all(Pattern pattern, String text, int group) {
        List<String> found = new ArrayList<>();
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            found.add(m.group(group));
        }
        return found;
    }

    /** Checks one peer list and returns it as id → [host, raftPort, grpcPort]. */
    private static Map<String, String[]> parsePeers(String where, String list) {
        Map<String, String[]> peers = new LinkedHashMap<>();
        for (String part : list.split(",")) {
            Matcher m = PEER.matcher(part.trim());
            assertTrue(m.matches(), () -> where + ": peer '" + part + "' is not id=host:raftPort:grpcPort");
            assertEquals("7071", m.group(3), () -> where + ": raft port of " + part);
            assertEquals("7070", m.group(4), () -> where + ": gRPC port of " + part);
            assertTrue(peers.put(m.group(1), new String[] {m.group(2), m.group(3), m.group(4)}) == null,
                    () -> where + ": duplicate peer id in " + list);
        }
        assertEquals(3, peers.size(), () -> where + ": three voters expected in " + list);
        return peers;
    }

    @Test
    void theDefaultPortsAreTheOnesTheFilesUse() {
        Map<String, String> keys = documentedKeys();
        assertEquals("7070", keys.get("grpc.port"));
        assertEquals("7071", keys.get("raft.port"));
        assertEquals("7072", keys.get("http.port"));
    }

    @Test
    void everyHourglassVariableNamesADocumentedKey() {
        Map<String, String> keys = documentedKeys();
        Map<String, Set<String>> byFile = new LinkedHashMap<>();
        for (String file : List.of("systemd/hourglass.env.example", "systemd/hourglass.service", "container/Dockerfile",
                "container/compose.yaml", "k8s/statefulset.yaml")) {
            byFile.put(file, new LinkedHashSet<>(all(ENV_NAME, read(file), 1)));
        }
        List<String> unknown = new ArrayList<>();
        byFile.forEach((file, vars) -> vars.stream()
                .filter(v -> !NOT_CONFIG.contains(v) && keyOf(v, keys) == null)
                .forEach(v -> unknown.add(file + ": " + v)));
        assertEquals(List.of(), unknown, "HOURGLASS_* variables that set no configuration key");
        for (String file : List.of("systemd/hourglass.env.example", "container/compose.yaml", "k8s/statefulset.yaml")) {
            for (String required : List.of("HOURGLASS_NODE_ID", "HOURGLASS_NODE_HOST", "HOURGLASS_NODE_DATADIR",
                    "HOURGLASS_CLUSTER_PEERS")) {
                assertTrue(byFile.get(file).contains(required), () -> file + " does not set " + required);
            }
        }
    }

    @Test
    void systemdEnvironmentFileSetsOneNodeOfAThreeNodeCluster() {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : read("systemd/hourglass.env.example").split("\n")) {
            String l = line.trim();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            Matcher m = Pattern.compile("(HOURGLASS_[A-Z0-9_]+)=(.*)").matcher(l);
            assertTrue(m.matches(), () -> "not NAME=value: " + line);
            assertFalse(m.group(2).startsWith("\"") || m.group(2).contains(" #"), () -> "keep values plain: " + line);
            env.put(m.group(1), m.group(2));
        }
        assertEquals("7070", env.get("HOURGLASS_GRPC_PORT"));
        assertEquals("7071", env.get("HOURGLASS_RAFT_PORT"));
        assertEquals("7072", env.get("HOURGLASS_HTTP_PORT"));
        Map<String, String[]> peers = parsePeers("hourglass.env.example", env.get("HOURGLASS_CLUSTER_PEERS"));
        String id = env.get("HOURGLASS_NODE_ID");
        assertTrue(peers.containsKey(id), () -> "node id " + id + " is not among the peers " + peers.keySet());
        assertEquals(peers.get(id)[0], env.get("HOURGLASS_NODE_HOST"), "node.host is this node's peer address");
    }

    @Test
    void systemdUnitRunsTheServerScriptSupervised() {
        String unit = read("systemd/hourglass.service");
        for (String line : List.of("ExecStart=/opt/hourglass/bin/hourglass-server", "EnvironmentFile=/etc/hourglass/hourglass.env",
                "Restart=on-failure", "RestartPreventExitStatus=65", "KillSignal=SIGTERM", "SuccessExitStatus=143",
                "User=hourglass",
                "WantedBy=multi-user.target")) {
            assertTrue(unit.lines().anyMatch(l -> l.trim().equals(line) || l.trim().startsWith(line + " ")),
                    () -> "hourglass.service lacks " + line);
        }
        assertTrue(Pattern.compile("(?m)^LimitNOFILE=\\d{5,}$").matcher(unit).find(), "LimitNOFILE");
        assertTrue(Pattern.compile("(?m)^TimeoutStopSec=\\d+s?$").matcher(unit).find(), "TimeoutStopSec");
        String env = read("systemd/hourglass.env.example");
        String dataDir = all(Pattern.compile("(?m)^HOURGLASS_NODE_DATADIR=(.*)$"), env, 1).get(0);
        assertTrue(unit.contains("ReadWritePaths=" + dataDir), "the unit may write the data directory " + dataDir);
    }

    @Test
    void dockerfileExposesTheThreePortsAndRunsTheServer() {
        String dockerfile = read("container/Dockerfile");
        assertTrue(dockerfile.lines().anyMatch(l -> l.startsWith("FROM eclipse-temurin:17-jre")), "base image");
        List<String> exposed = all(Pattern.compile("(?m)^EXPOSE\\s+(.*)$"), dockerfile, 1);
        assertEquals(1, exposed.size(), "one EXPOSE line");
        assertEquals(Set.of("7070", "7071", "7072"), Set.of(exposed.get(0).trim().split("\\s+")));
        assertTrue(dockerfile.contains("VOLUME /var/lib/hourglass"), "VOLUME");
        assertTrue(dockerfile.contains("HOURGLASS_NODE_DATADIR=/var/lib/hourglass"), "data in the volume");
        assertTrue(dockerfile.contains("ENTRYPOINT [\"/opt/hourglass/bin/hourglass-server\"]"), "exec-form entrypoint");
        for (String dir : List.of("bin", "conf", "lib")) {
            assertTrue(Pattern.compile("(?m)^COPY .*\\b" + dir + "/\\s+/opt/hourglass/" + dir + "/$").matcher(dockerfile).find(),
                    () -> "copies " + dir + "/ of the distribution");
            assertTrue(Files.isDirectory(module().resolveSibling("deploy").resolve("target/hourglass").resolve(dir))
                    || !Files.isDirectory(module().resolveSibling("deploy").resolve("target/hourglass")),
                    () -> "the distribution has no " + dir + "/");
        }
    }

    @Test
    void composeRunsThreeNodesThatNameEachOtherByServiceName() {
        String compose = read("container/compose.yaml");
        // Services: two-space indented keys under "services:", up to the next top-level key.
        String services = compose.substring(compose.indexOf("\nservices:"));
        services = services.substring(0, services.indexOf("\nvolumes:"));
        List<String> names = all(Pattern.compile("(?m)^  ([a-z0-9-]+):\\s*$"), services, 1);
        assertEquals(List.of("n1", "n2", "n3"), names);
        String[] blocks = services.split("(?m)^  (?=[a-z0-9-]+:\\s*$)");
        int checked = 0;
        for (String block : blocks) {
            Matcher name = Pattern.compile("^([a-z0-9-]+):").matcher(block);
            if (!name.find()) {
                continue;
            }
            String service = name.group(1);
            Map<String, String> env = new LinkedHashMap<>();
            Matcher m = Pattern.compile("(?m)^\\s+(HOURGLASS_[A-Z0-9_]+):\\s*\"?([^\"\\n]*)\"?\\s*$").matcher(block);
            while (m.find()) {
                env.put(m.group(1), m.group(2).trim());
            }
            assertEquals(service, env.get("HOURGLASS_NODE_ID"), () -> service + ": node id");
            assertEquals(service, env.get("HOURGLASS_NODE_HOST"), () -> service + ": node host is the service name");
            assertEquals("7070", env.get("HOURGLASS_GRPC_PORT"));
            assertEquals("7071", env.get("HOURGLASS_RAFT_PORT"));
            assertEquals("7072", env.get("HOURGLASS_HTTP_PORT"));
            Map<String, String[]> peers = parsePeers("compose " + service, env.get("HOURGLASS_CLUSTER_PEERS"));
            assertEquals(Set.copyOf(names), peers.keySet(), "the peers are the services");
            peers.forEach((id, addr) -> assertEquals(id, addr[0], () -> "peer " + id + " is reached by its service name"));
            assertTrue(block.contains(":/var/lib/hourglass"), () -> service + ": a volume on the data directory");
            assertTrue(block.contains("<<: *security"), () -> service + ": security on");
            assertTrue(block.contains("./certs/" + service + ":/etc/hourglass/tls/node:ro"),
                    () -> service + ": its own certificates (deploy/certs.sh's DIR/" + service + "), read-only");
            assertTrue(Pattern.compile("\"\\d+:7070\"").matcher(block).find(), () -> service + ": gRPC published");
            checked++;
        }
        assertEquals(3, checked);
        assertTrue(compose.contains("https://localhost:7072/readyz") && compose.contains("/etc/hourglass/tls/ca.pem"),
                "healthcheck on /readyz over HTTPS, trusting the cluster's CA");
        assertTrue(read("container/Dockerfile").contains("install -y --no-install-recommends curl"),
                "the image has curl for the HTTPS healthcheck");
        assertTrue(compose.contains("dockerfile: ../../container/Dockerfile")
                && compose.contains("context: ../target/hourglass"), "builds from the distribution with this Dockerfile");
    }

    @Test
    void composeTurnsSecurityOnWithTheFilesCertsShMakes() {
        String compose = read("container/compose.yaml");
        String block = compose.substring(compose.indexOf("\nx-security: &security"), compose.indexOf("\nservices:"));
        Map<String, String> env = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^\\s+(HOURGLASS_[A-Z0-9_]+):\\s*\"?([^\"\\n]*)\"?\\s*$").matcher(block);
        while (m.find()) {
            env.put(m.group(1), m.group(2).trim());
        }
        assertEquals("true", env.get("HOURGLASS_SECURITY_ENABLED"));
        // deploy/certs.sh DIR n1 n2 n3 makes DIR/NODE/{node,peer}.{pem,key}, DIR/{ca,peer-ca}.pem, DIR/admin.token.
        Map<String, String> expected = Map.of(
                "HOURGLASS_TLS_CERTFILE", "/etc/hourglass/tls/node/node.pem",
                "HOURGLASS_TLS_KEYFILE", "/etc/hourglass/tls/node/node.key",
                "HOURGLASS_TLS_PEERCERTFILE", "/etc/hourglass/tls/node/peer.pem",
                "HOURGLASS_TLS_PEERKEYFILE", "/etc/hourglass/tls/node/peer.key",
                "HOURGLASS_TLS_CAFILE", "/etc/hourglass/tls/ca.pem",
                "HOURGLASS_TLS_PEERCAFILE", "/etc/hourglass/tls/peer-ca.pem",
                "HOURGLASS_SECURITY_BOOTSTRAPTOKENFILE", "/etc/hourglass/tls/admin.token");
        expected.forEach((k, v) -> assertEquals(v, env.get(k), k));
        for (String file : List.of("ca.pem", "peer-ca.pem", "admin.token")) {
            assertTrue(compose.contains("./certs/" + file + ":/etc/hourglass/tls/" + file + ":ro"), file + " mounted");
        }
    }

    @Test
    void statefulSetNamesPodsByOrdinalAndProbesTheHttpPort() {
        String sts = read("k8s/statefulset.yaml");
        assertTrue(sts.contains("kind: StatefulSet"));
        assertTrue(sts.contains("replicas: 3"));
        assertTrue(sts.contains("serviceName: hourglass"));
        assertTrue(sts.contains("podManagementPolicy: Parallel"), "no pod is ready before a quorum runs");
        assertTrue(sts.contains("volumeClaimTemplates:"));
        assertTrue(Pattern.compile("mountPath: /var/lib/hourglass\\b").matcher(sts).find());
        assertTrue(Pattern.compile("(?s)name: HOURGLASS_NODE_ID\\s+valueFrom:\\s+fieldRef:\\s+fieldPath: metadata.name").matcher(sts).find(),
                "node id from the pod name");
        assertTrue(sts.contains("value: $(HOURGLASS_NODE_ID).hourglass"), "node host is the pod's headless-service name");
        assertTrue(Pattern.compile("terminationGracePeriodSeconds: \\d+").matcher(sts).find());
        assertProbe(sts, "readinessProbe", "/readyz");
        assertProbe(sts, "livenessProbe", "/healthz");
        assertEquals(List.of("7070", "7071", "7072"), all(Pattern.compile("containerPort: (\\d+)"), sts, 1));
        String list = all(Pattern.compile("name: HOURGLASS_CLUSTER_PEERS\\s+value: (\\S+)"), sts, 1).get(0);
        Map<String, String[]> peers = parsePeers("statefulset", list);
        assertEquals(List.of("hourglass-0", "hourglass-1", "hourglass-2"), List.copyOf(peers.keySet()), "one id per ordinal");
        peers.forEach((id, addr) -> assertEquals(id + ".hourglass", addr[0], () -> id + " at its headless DNS name"));
        Map<String, String> env = new LinkedHashMap<>();
        Matcher m = Pattern.compile("name: (HOURGLASS_[A-Z_]+PORT)\\s+value: \"(\\d+)\"").matcher(sts);
        while (m.find()) {
            env.put(m.group(1), m.group(2));
        }
        assertEquals(Map.of("HOURGLASS_GRPC_PORT", "7070", "HOURGLASS_RAFT_PORT", "7071", "HOURGLASS_HTTP_PORT", "7072"), env);
    }

    private static void assertProbe(String sts, String probe, String path) {
        Matcher m = Pattern.compile(probe + ":\\s+httpGet:\\s+path: (\\S+)\\s+port: (\\S+)").matcher(sts);
        if (!m.find()) {
            fail("no httpGet " + probe);
        }
        assertEquals(path, m.group(1), probe + " path");
        assertEquals("7072", m.group(2), probe + " port");
    }

    @Test
    void servicesAndDisruptionBudget() {
        String headless = read("k8s/service-headless.yaml");
        assertTrue(headless.contains("name: hourglass\n"), "headless service named as the StatefulSet's serviceName");
        assertTrue(headless.contains("clusterIP: None"));
        assertTrue(headless.contains("publishNotReadyAddresses: true"), "peers resolve before any is ready");
        assertEquals(List.of("7070", "7071", "7072"), all(Pattern.compile("(?m)^\\s+port: (\\d+)"), headless, 1));
        String client = read("k8s/service-client.yaml");
        assertFalse(client.contains("clusterIP: None"));
        assertEquals(List.of("7070", "7072"), all(Pattern.compile("(?m)^\\s+port: (\\d+)"), client, 1), "no Raft for clients");
        String pdb = read("k8s/pdb.yaml");
        assertTrue(pdb.contains("kind: PodDisruptionBudget") && pdb.contains("maxUnavailable: 1"));
        String selector = "app.kubernetes.io/name: hourglass";
        for (String f : List.of(headless, client, pdb, read("k8s/statefulset.yaml"))) {
            assertTrue(f.contains(selector), "every manifest selects the pods by " + selector);
        }
    }
}
