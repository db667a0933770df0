package io.hourglass.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code hourglass room}: the lock-step rooms subcommands. */
@Command(name = "room", mixinStandardHelpOptions = true,
        description = {"Send to, join and inspect lock-step rooms: every message sent to a room "
                + "goes to all its subscribers in priority order, and the next one is released "
                + "only when every SYNC subscriber has acked the last; out-of-band messages "
                + "bypass the gate."},
        subcommands = {RoomSendCommand.class, RoomJoinCommand.class, RoomPeekCommand.class,
            RoomStateCommand.class, RoomListCommand.class, RoomMetricsCommand.class, RoomConfigureCommand.class})
final class RoomCommand implements Callable<Integer> {
    @ParentCommand
    private HourglassCommand root;

    @Spec
    private CommandSpec spec;

    HourglassCommand root() {
        return root;
    }

    /** Without a subcommand there is nothing to do. */
    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "missing subcommand: send, join, peek, state, list, metrics or configure");
    }

    /** @throws CommandLine.ParameterException if {@code room} is blank */
    static void requireRoom(CommandSpec spec, String room) {
        if (room.isBlank()) {
            throw new CommandLine.ParameterException(spec.commandLine(), "ROOM must not be empty");
        }
    }

    /** Rethrows a locally refused argument as a usage error (exit 2). */
    static CommandLine.ParameterException usage(CommandSpec spec, IllegalArgumentException e) {
        return new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    }
}
