package io.hourglass.core.command;

import io.hourglass.core.proto.Command;
import io.hourglass.core.storage.StoreBatch;
import io.hourglass.core.storage.TermIndex;
import java.util.Set;

/**
 * The deterministic apply of one domain's commands, registered with the {@link StateApplier} for
 * the command kinds it owns. Called on the apply thread only.
 *
 * <p>Contract: read only the command, the leader's stamp, the entry's position and the store —
 * never a clock, never local state that another replica may not have — and write only into
 * {@code batch}, so every replica writes identical bytes. A command it does not understand
 * throws: skipping it would let replicas diverge silently.
 */
public interface CommandApplier {
    /** The kinds of {@link Command} body this applier owns; no two registered appliers share one. */
    Set<Command.BodyCase> kinds();

    ApplyResult apply(StoreBatch batch, Command command, long stampMs, TermIndex position);
}
