package io.hourglass.cli;

import io.hourglass.client.ClientCredentials;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.ServerAddress;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.UnaryOperator;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * The {@code hourglass} command: global options and the subcommands.
 *
 * <p>Build it with {@link #newCommandLine}, which installs the error reporting and exit-code
 * mapping; a bare {@code new CommandLine(...)} would print stack traces and exit 1. Global
 * options may be given before or after the subcommand ({@code scope = INHERIT}).
 */
@Command(name = "hourglass",
        mixinStandardHelpOptions = true,
        versionProvider = HourglassCommand.Version.class,
        description = "Publish to, consume from and administer an Hourglass cluster.",
        subcommands = {ClusterCommand.class, TopicCommand.class, GroupCommand.class,
            ConsumerCommand.class, PublishCommand.class, ConsumeCommand.class, RoomCommand.class,
            MessageCommand.class, CancelCommand.class, TokenCommand.class, GrantCommand.class, BenchCommand.class,
            CommandLine.HelpCommand.class},
        footerHeading = "%nEnvironment:%n",
        footer = {"  HOURGLASS_SERVERS   default for --servers",
            "  HOURGLASS_TOKEN     default for --token",
            "  HOURGLASS_TLS_CA    default for --tls-ca",
            "  HOURGLASS_LOG_LEVEL client log level on stderr (default OFF; --verbose: INFO)"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success",
            "1:other failure (server error, I/O error)",
            "2:bad command line or input (unknown option, bad duration, ...)",
            "3:the server rejected the request as invalid",
            "4:no server reachable / available before --deadline (node down, no quorum)",
            "5:not found (unknown topic, group or node); cancel: already delivered",
            "6:failed precondition (e.g. removing the leader)",
            "7:already exists (e.g. adding a member twice)",
            "8:unauthenticated (no, wrong or revoked token or certificate)",
            "9:permission denied (the principal lacks the permission)"})
public final class HourglassCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Option(names = "--servers", split = ",", paramLabel = "host:port",
            converter = ServerAddressConverter.class, scope = ScopeType.INHERIT,
            defaultValue = "${env:HOURGLASS_SERVERS:-localhost:7070}",
            description = "Servers to talk to, comma-separated (default: ${DEFAULT-VALUE}).")
    private List<ServerAddress> servers;

    @Option(names = "--output", paramLabel = "table|json", converter = OutputFormat.Converter.class,
            scope = ScopeType.INHERIT, defaultValue = "table",
            description = "table (default): aligned columns; json: one object per line, "
                    + "times in epoch milliseconds.")
    private OutputFormat output;

    @Option(names = "--deadline", paramLabel = "D", converter = DurationConverter.Positive.class,
            scope = ScopeType.INHERIT, defaultValue = "15s",
            description = "How long to keep retrying while no server can serve a request, and "
                    + "how long consume keeps reconnecting (default: ${DEFAULT-VALUE}).")
    private Duration deadline;

    @Option(names = "--token", paramLabel = "TOKEN", scope = ScopeType.INHERIT,
            defaultValue = "${env:HOURGLASS_TOKEN}",
            description = "Bearer token to authenticate with (default: $HOURGLASS_TOKEN).")
    private String token;

    @Option(names = "--token-file", paramLabel = "FILE", scope = ScopeType.INHERIT,
            description = "Read the bearer token from the first line of FILE.")
    private Path tokenFile;

    @Option(names = "--tls", scope = ScopeType.INHERIT,
            description = "Use TLS, trusting the JVM's CAs unless --tls-ca is given (implied by --tls-ca and --tls-cert).")
    private boolean tls;

    @Option(names = "--tls-ca", paramLabel = "FILE", scope = ScopeType.INHERIT,
            defaultValue = "${env:HOURGLASS_TLS_CA}",
            description = "PEM CA the servers' certificates must chain to (default: $HOURGLASS_TLS_CA).")
    private Path tlsCa;

    @Option(names = "--tls-cert", paramLabel = "FILE", scope = ScopeType.INHERIT,
            description = "PEM client certificate, for mutual TLS (its subject CN is the principal).")
    private Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE", scope = ScopeType.INHERIT,
            description = "PEM (PKCS#8) key of --tls-cert.")
    private Path tlsKey;

    @Option(names = "--verbose", scope = ScopeType.INHERIT,
            description = "Print stack traces with errors.")
    private boolean verbose;

    private final ClientFactory clientFactory;
    private final InputStream stdin;

    /** The real command: gRPC to the servers, payloads from {@code System.in}. */
    public HourglassCommand() {
        this(ClientFactory.grpc(), System.in);
    }

    /** A command whose clients and standard input are provided, for tests and embedding. */
    public HourglassCommand(ClientFactory clientFactory, InputStream stdin) {
        this.clientFactory = Objects.requireNonNull(clientFactory, "clientFactory");
        this.stdin = Objects.requireNonNull(stdin, "stdin");
    }

    /**
     * A command line for {@code command} with the CLI's error handling: one line on stderr, exit
     * codes from {@link ExitCodes}. Set its out/err writers before {@code execute}.
     */
    public static CommandLine newCommandLine(HourglassCommand command) {
        ExitCodes exitCodes = new ExitCodes();
        ErrorReporter reporter = new ErrorReporter(exitCodes);
        return new CommandLine(command)
                .setExitCodeExceptionMapper(exitCodes)
                .setExecutionExceptionHandler(reporter)
                .setParameterExceptionHandler(reporter);
    }

    /** Without a subcommand there is nothing to do. */
    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "missing subcommand: cluster, topic, group, consumer, message, publish, consume, room, token or grant");
    }

    /** Whether records are printed as JSON lines (scripts), not as a table (people). */
    boolean isJson() {
        return output == OutputFormat.JSON;
    }

    boolean verbose() {
        return verbose;
    }

    Duration deadline() {
        return deadline;
    }

    InputStream stdin() {
        return stdin;
    }

    /** A client for the global options; {@code customize} adds command-specific settings. */
    HourglassClient openClient(UnaryOperator<HourglassClient.Builder> customize) {
        HourglassClient.Builder builder = HourglassClient.builder()
                .servers(servers.stream().map(ServerAddress::toString).toList())
                .retryDeadline(deadline);
        ClientCredentials credentials = credentials();
        if (!credentials.equals(ClientCredentials.NONE)) {
            builder.credentials(credentials);
        }
        return clientFactory.open(customize.apply(builder));
    }

    /** The TLS files and token of the global options. */
    ClientCredentials credentials() {
        String bearer = token;
        if (tokenFile != null) {
            try {
                bearer = ClientCredentials.readTokenFile(tokenFile);
            } catch (IOException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--token-file: cannot read " + tokenFile
                        + " (" + e.getMessage() + ")");
            }
        }
        try {
            return new ClientCredentials(tls, tlsCa, tlsCert, tlsKey, bearer);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--tls-cert and --tls-key go together");
        }
    }

    RecordPrinter printer(List<Column> columns, PrintWriter out) {
        return RecordPrinter.create(output, columns, out);
    }

    /** The version from the jar manifest ({@code Implementation-Version}). */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String version = HourglassCommand.class.getPackage().getImplementationVersion();
            return new String[] {"hourglass " + (version == null ? "(development build)" : version)};
        }
    }
}
