package io.hourglass.cli;

import io.grpc.inprocess.InProcessChannelBuilder;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine;

/** Runs {@code hourglass} in-process, against in-process servers named by the host part. */
final class Cli {
    /** What a run printed and returned. */
    record Result(int exitCode, String out, String err) {
        List<String> outLines() {
            return out.isEmpty() ? List.of() : Arrays.asList(out.split("\n"));
        }

        List<String> errLines() {
            return err.isEmpty() ? List.of() : Arrays.asList(err.split("\n"));
        }
    }

    static final ClientFactory IN_PROCESS = builder -> builder
            .channelFactory(address -> InProcessChannelBuilder.forName(address.host()).build())
            .build();

    private Cli() {
    }

    /** Runs with {@code --servers broker} prepended. */
    static Result run(FakeBroker broker, String... args) {
        List<String> all = new ArrayList<>(List.of("--servers", broker.address()));
        all.addAll(List.of(args));
        return runWith(IN_PROCESS, "", all.toArray(new String[0]));
    }

    static Result runWith(ClientFactory factory, String stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        HourglassCommand command = new HourglassCommand(factory,
                new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
        CommandLine commandLine = HourglassCommand.newCommandLine(command);
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        int exitCode = commandLine.execute(args);
        return new Result(exitCode, out.toString(), err.toString());
    }
}
