package io.hourglass.cli;

import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass token}: bearer tokens, one per principal (needs admin). */
@Command(name = "token", mixinStandardHelpOptions = true,
        description = "Bearer tokens, one per principal (needs the admin permission): create, list, revoke.",
        subcommands = {TokenCommand.Create.class, TokenCommand.ListTokens.class, TokenCommand.Revoke.class,
            TokenCommand.WhoAmI.class})
final class TokenCommand implements Callable<Integer> {
    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "missing subcommand: create, list, revoke or whoami");
    }

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = "Make a token for principal NAME and print it: name, token. It is shown this once; "
                    + "the cluster keeps its SHA-256 only. Grant it permissions with 'hourglass grant add'.")
    static final class Create implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(Column.text("name", "NAME"), Column.text("token", "TOKEN"));

        @ParentCommand
        private TokenCommand parent;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "The principal the token authenticates as.")
        private String name;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "NAME", name);
            return AdminSupport.print(parent.root, spec, COLUMNS, admin -> {
                String token = admin.createToken(name);
                return List.of(AdminSupport.record("name", name, "token", token));
            });
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Print one record per token: name, created (never the token itself).")
    static final class ListTokens implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(Column.text("name", "NAME"), Column.time("created", "CREATED"));

        @ParentCommand
        private TokenCommand parent;

        @Spec
        private CommandSpec spec;

        @Override
        public Integer call() {
            return AdminSupport.print(parent.root, spec, COLUMNS, admin -> admin.listTokens().stream().map(t -> {
                return AdminSupport.record("name", t.getName(), "created", t.getCreatedAtMs());
            }).toList());
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true,
            description = "Revoke the token of NAME on every node (exit 5 when it has none); prints name, revoked.")
    static final class Revoke implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(Column.text("name", "NAME"), Column.text("revoked", "REVOKED"));

        @ParentCommand
        private TokenCommand parent;

        @Spec
        private CommandSpec spec;

        @Parameters(index = "0", paramLabel = "NAME", description = "The principal whose token to revoke.")
        private String name;

        @Override
        public Integer call() {
            AdminSupport.require(spec, "NAME", name);
            return AdminSupport.print(parent.root, spec, COLUMNS, admin -> {
                admin.revokeToken(name);
                return List.of(AdminSupport.record("name", name, "revoked", true));
            });
        }
    }

    @Command(name = "whoami", mixinStandardHelpOptions = true,
            description = "Print the principal these credentials authenticate as, and whether security is on "
                    + "(needs no permission; exit 8 when the credentials are refused).")
    static final class WhoAmI implements Callable<Integer> {
        static final List<Column> COLUMNS = List.of(Column.text("principal", "PRINCIPAL"),
                Column.text("security", "SECURITY"));

        @ParentCommand
        private TokenCommand parent;

        @Spec
        private CommandSpec spec;

        @Override
        public Integer call() {
            return AdminSupport.print(parent.root, spec, COLUMNS, admin -> {
                var who = admin.whoAmI();
                return List.of(AdminSupport.record("principal", who.getPrincipal().isEmpty() ? "-" : who.getPrincipal(),
                        "security", who.getSecurityEnabled() ? "on" : "off"));
            });
        }
    }
}
