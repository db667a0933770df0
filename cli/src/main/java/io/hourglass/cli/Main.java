package io.hourglass.cli;

import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;

/** Entry point of {@code bin/hourglass}; the only place that calls {@link System#exit}. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        configureLogging(args);
        PrintWriter out = new PrintWriter(new BufferedWriter(
                new OutputStreamWriter(System.out, StandardCharsets.UTF_8)), false);
        PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
        CommandLine commandLine = HourglassCommand.newCommandLine(new HourglassCommand());
        commandLine.setOut(out);
        commandLine.setErr(err);
        int exitCode = commandLine.execute(args);
        out.flush();
        err.flush();
        System.exit(exitCode);
    }

    /**
     * Logs go to stderr through the CLI's own logback file (a {@code logback.xml} on the shared
     * classpath would be the server's), silent unless {@code HOURGLASS_LOG_LEVEL} or
     * {@code --verbose} asks. gRPC and netty log through {@code java.util.logging}, whose
     * console handler would write to stderr past logback (32 lines for an unresolvable host):
     * JUL is routed to SLF4J instead. Must run before the first logger is created.
     */
    static void configureLogging(String[] args) {
        if (System.getProperty("logback.configurationFile") == null) {
            System.setProperty("logback.configurationFile", "hourglass-cli-logback.xml");
        }
        if (System.getenv("HOURGLASS_LOG_LEVEL") == null && Arrays.asList(args).contains("--verbose")) {
            System.setProperty("HOURGLASS_LOG_LEVEL", "INFO");
        }
        SLF4JBridgeHandler.removeHandlersForRootLogger();
        SLF4JBridgeHandler.install();
    }
}
