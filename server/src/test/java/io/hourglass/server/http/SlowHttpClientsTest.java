package io.hourglass.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.server.testing.TestNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The probes answer while clients hang on the HTTP port with half-sent requests (with the JDK's
 * server, three of them made /healthz, /readyz and /metrics time out), and the hung connections are
 * closed after {@code http.idleTimeout}.
 */
@Timeout(120)
class SlowHttpClientsTest {
    private static final int HUNG = 12;
    @TempDir
    static Path dir;
    private static TestNode node;

    @BeforeAll
    static void start() {
        node = TestNode.start(dir, Map.of("http.idleTimeout", "2s", "http.threads", "4"));
    }

    @AfterAll
    static void stop() {
        node.close();
    }

    @Test
    void probesAnswerWhileConnectionsHangHalfWayAndThoseAreClosedAfterTheIdleTimeout() throws Exception {
        List<Socket> hung = new ArrayList<>();
        try {
            for (int i = 0; i < HUNG; i++) {
                Socket s = new Socket();
                s.connect(new InetSocketAddress("127.0.0.1", node.httpPort()), 5_000);
                s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: loc".getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                hung.add(s);
            }
            long opened = System.nanoTime();
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
            for (String path : List.of("/healthz", "/readyz", "/metrics")) {
                long t0 = System.nanoTime();
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + node.httpPort() + path)).timeout(Duration.ofSeconds(1)).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), path);
                System.out.printf("%s answered in %d ms with %d connections hung%n", path,
                        Duration.ofNanos(System.nanoTime() - t0).toMillis(), HUNG);
            }
            for (Socket s : hung) {
                s.setSoTimeout(10_000);
                assertTrue(closedByServer(s.getInputStream()), "the server closed a hung connection");
            }
            long closedAfter = Duration.ofNanos(System.nanoTime() - opened).toMillis();
            System.out.printf("hung connections closed %d ms after they stalled%n", closedAfter);
            assertTrue(closedAfter >= 1_500, "not before the idle timeout: " + closedAfter);
        } finally {
            for (Socket s : hung) {
                s.close();
            }
        }
    }

    /** Reads until end of stream (the server may answer 408 first); false if nothing ends within the socket timeout. */
    private static boolean closedByServer(InputStream in) throws IOException {
        try {
            byte[] buf = new byte[1024];
            while (in.read(buf) >= 0) {
                // a 408 or 400 before the close is fine
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    @Test
    void anUnknownPathIsNotFound() throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + node.httpPort() + "/nope")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(404, r.statusCode());
    }
}
