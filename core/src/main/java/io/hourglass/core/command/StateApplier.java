package io.hourglass.core.command;

import io.hourglass.core.proto.Command;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.StoreBatch;
import io.hourglass.core.storage.TermIndex;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The one apply seam: routes each replicated command, by its kind, to the {@link CommandApplier}
 * that owns it, commits the entry's batch with its log position, and tells the
 * {@link ApplyListener}s. The queue's commands ({@link QueueApplier}) and peer registration are
 * always routed; a domain above this package (the rooms) passes its applier in at the node's
 * composition root, so this package never names it.
 *
 * <p>Deterministic: appliers read only the command, its log position, the leader's stamp and the
 * store — never a clock — so every replica writes identical bytes. Called from one thread (the
 * Raft apply thread). A command no applier owns throws: skipping it would let replicas diverge
 * silently.
 */
public final class StateApplier {
    /** The group name of a deletion that removes the message outright. */
    public static final String ALL_GROUPS = QueueApplier.ALL_GROUPS;

    private final EventStore store;
    /** Written only by the constructor. */
    private final Map<Command.BodyCase, CommandApplier> appliers;
    private final List<ApplyListener> listeners = new CopyOnWriteArrayList<>();

    /**
     * @param domains appliers of the commands beyond the queue's (the node passes the rooms'); a
     *        command kind owned twice is refused
     */
    public StateApplier(EventStore store, CommandApplier... domains) {
        this.store = store;
        Map<Command.BodyCase, CommandApplier> byKind = new EnumMap<>(Command.BodyCase.class);
        register(byKind, new QueueApplier(store));
        register(byKind, new PeerApplier(store));
        for (CommandApplier domain : domains) {
            register(byKind, domain);
        }
        this.appliers = Collections.unmodifiableMap(byKind);
    }

    private static void register(Map<Command.BodyCase, CommandApplier> byKind, CommandApplier applier) {
        for (Command.BodyCase kind : applier.kinds()) {
            CommandApplier before = byKind.putIfAbsent(kind, applier);
            if (before != null) {
                throw new IllegalArgumentException(kind + " is applied by both " + before.getClass().getSimpleName()
                        + " and " + applier.getClass().getSimpleName());
            }
        }
    }

    public void addListener(ApplyListener listener) {
        listeners.add(listener);
    }

    public EventStore store() {
        return store;
    }

    public ApplyResult apply(Command command, TermIndex position) {
        if (position.index() <= store.appliedIndex().index()) {
            throw new IllegalStateException("entry " + position + " is not after the applied " + store.appliedIndex());
        }
        long stamp = command.getStampedAtMs();
        if (stamp <= 0) {
            throw new IllegalStateException("entry " + position + " carries no leader time stamp");
        }
        CommandApplier applier = appliers.get(command.getBodyCase());
        if (applier == null) {
            throw new IllegalStateException("entry " + position + " holds an unknown command: " + command.getBodyCase());
        }
        ApplyResult result;
        StoreBatch batch = store.newBatch();
        try {
            result = applier.apply(batch, command, stamp, position);
        } catch (RuntimeException e) {
            batch.close();
            throw e;
        }
        store.commit(batch, position, stamp);
        for (ApplyListener l : listeners) {
            l.onApplied(result);
        }
        return result;
    }

    /** Advances the applied position over an entry that carries no command (Raft's own entries). */
    public void skip(TermIndex position) {
        if (position.index() > store.appliedIndex().index()) {
            store.commit(store.newBatch(), position);
        }
    }
}
