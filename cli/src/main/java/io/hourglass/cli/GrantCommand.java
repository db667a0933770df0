package io.hourglass.cli;

import io.hourglass.client.AdminClient;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass grant}: principal x permission x resource, deny by default (needs admin). */
@Command(name = "grant", mixinStandardHelpOptions = true,
        description = "Permissions of principals (needs the admin permission): add, revoke, list. A permission is "
                + "publish, consume, rooms or admin; a resource a topic or room name, or a prefix ending in * "
                + "(* alone: everything).",
        subcommands = {GrantCommand.Add.class, GrantCommand.Revoke.class, GrantCommand.ListGrants.class})
final class GrantCommand implements Callable<Integer> {
    static final List<Column> COLUMNS = List.of(Column.text("principal", "PRINCIPAL"),
            Column.text("permission", "PERMISSION"), Column.text("resource", "RESOURCE"));

    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: add, revoke or list");
    }

    private static Map<String, Object> record(String principal, String permission, String resource) {
        return AdminSupport.record("principal", principal, "permission", permission, "resource", resource);
    }

    /** An admin call changing one grant. */
    private interface GrantChange {
        void apply(AdminClient admin, String principal, String permission, String resource);
    }

    /** PRINCIPAL PERMISSION RESOURCE, shared by add and revoke. */
    static final class Triple {
        @Parameters(index = "0", paramLabel = "PRINCIPAL", description = "A token's name or a certificate's CN.")
        String principal;

        @Parameters(index = "1", paramLabel = "PERMISSION", description = "publish, consume, rooms or admin.")
        String permission;

        @Parameters(index = "2", paramLabel = "RESOURCE", description = "A topic or room name, or a prefix ending in *.")
        String resource;

        /** Checks the three, makes the change and prints the grant. */
        int change(GrantCommand parent, CommandSpec spec, GrantChange change) {
            AdminSupport.require(spec, "PRINCIPAL", principal);
            AdminSupport.require(spec, "PERMISSION", permission);
            AdminSupport.require(spec, "RESOURCE", resource);
            return AdminSupport.print(parent.root, spec, COLUMNS, admin -> {
                change.apply(admin, principal, permission, resource);
                return List.of(record(principal, permission.toLowerCase(), resource));
            });
        }
    }

    @Command(name = "add", mixinStandardHelpOptions = true,
            description = "Grant PERMISSION on RESOURCE to PRINCIPAL (idempotent); prints the grant.")
    static final class Add implements Callable<Integer> {
        @ParentCommand
        private GrantCommand parent;

        @Spec
        private CommandSpec spec;

        @CommandLine.Mixin
        private Triple grant;

        @Override
        public Integer call() {
            return grant.change(parent, spec, AdminClient::addGrant);
        }
    }

    @Command(name = "revoke", mixinStandardHelpOptions = true,
            description = "Revoke a grant (exit 5 when there is no such grant); prints it.")
    static final class Revoke implements Callable<Integer> {
        @ParentCommand
        private GrantCommand parent;

        @Spec
        private CommandSpec spec;

        @CommandLine.Mixin
        private Triple grant;

        @Override
        public Integer call() {
            return grant.change(parent, spec, AdminClient::revokeGrant);
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "Print one record per grant: principal, permission, resource.")
    static final class ListGrants implements Callable<Integer> {
        @ParentCommand
        private GrantCommand parent;

        @Spec
        private CommandSpec spec;

        @Option(names = "--principal", paramLabel = "NAME", description = "Only the grants of NAME.")
        private String principal;

        @Override
        public Integer call() {
            return AdminSupport.print(parent.root, spec, COLUMNS, admin -> admin.listGrants(principal).stream()
                    .map(g -> record(g.getPrincipal(), g.getPermission(), g.getResource())).toList());
        }
    }
}
