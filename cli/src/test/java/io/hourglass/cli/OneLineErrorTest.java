package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Errors are one line on stderr, in a real {@code hourglass} process: gRPC's java.util.logging
 * output (which bypasses picocli's writers) must not reach stderr, and a port that is not an
 * Hourglass client port is named as such.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OneLineErrorTest {
    /** What one {@code hourglass} process printed. */
    record Run(int exitCode, String out, List<String> errLines) {
    }

    private static Run hourglass(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Main.class.getName()));
        command.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        var out = p.getInputStream().readAllBytes();
        var err = p.getErrorStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String e = new String(err, StandardCharsets.UTF_8);
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8),
                e.isEmpty() ? List.of() : Arrays.asList(e.split("\n")));
    }

    @Test
    void anUnresolvableHostIsOneLine() throws Exception {
        Run r = hourglass("--servers", "no-such-host.invalid:7070", "--deadline", "2s", "topic", "list");
        assertEquals(ExitCodes.UNAVAILABLE, r.exitCode(), String.join("\n", r.errLines()));
        assertEquals(1, r.errLines().size(), String.join("\n", r.errLines()));
    }

    @Test
    void anHttpPortIsNotAnHourglassClientPort() throws Exception {
        HttpServer http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        http.createContext("/", ex -> {
            ex.sendResponseHeaders(404, -1);
            ex.close();
        });
        http.start();
        try {
            Run r = hourglass("--servers", "127.0.0.1:" + http.getAddress().getPort(), "topic", "list");
            assertEquals(ExitCodes.UNAVAILABLE, r.exitCode(), String.join("\n", r.errLines()));
            assertEquals(1, r.errLines().size(), String.join("\n", r.errLines()));
            assertTrue(r.errLines().get(0).contains("is not an Hourglass client port"), r.errLines().get(0));
        } finally {
            http.stop(0);
        }
    }

    @Test
    void aGrpcServerWithoutHourglassServicesIsNotAnHourglassClientPort() throws Exception {
        // What the Raft port is to a client: gRPC, but none of our services.
        Server raftLike = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).build().start();
        try {
            for (String[] args : List.of(new String[] {"topic", "list"}, new String[] {"consume", "t", "--timeout", "1s"},
                    new String[] {"publish", "t", "x"})) {
                List<String> all = new ArrayList<>(List.of("--servers", "127.0.0.1:" + raftLike.getPort()));
                all.addAll(List.of(args));
                Run r = hourglass(all.toArray(new String[0]));
                assertEquals(ExitCodes.UNAVAILABLE, r.exitCode(), String.join("\n", r.errLines()));
                assertEquals(1, r.errLines().size(), String.join("\n", r.errLines()));
                assertTrue(r.errLines().get(0).contains("is not an Hourglass client port"), r.errLines().get(0));
            }
        } finally {
            raftLike.shutdownNow();
        }
    }

    @Test
    void aZeroDeadlineIsAUsageErrorQuotingTheUser() {
        Cli.Result r = Cli.runWith(ClientFactory.grpc(), "", "--deadline", "0s", "topic", "list");
        assertEquals(ExitCodes.USAGE, r.exitCode());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().contains("'0s'"), r.err());
    }
}
