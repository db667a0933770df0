package io.hourglass.server.shard;

import java.util.List;

/**
 * What one shard's leader-only engines (delivery, rooms) are told: that they lead, which holds while
 * Ratis names this node the shard's leader and the node is not cut off from the cluster. A leader cut
 * off by a partition keeps its Raft role until it hears of a newer term, which may take seconds; its
 * engines stop at once instead (their streams end, so clients find the new leader), and start again
 * if contact returns while it still leads.
 */
public final class EngineLeadership {
    /** One engine's setLeading: whether it leads, and in which Raft term. */
    @FunctionalInterface
    public interface Engine {
        void setLeading(boolean leading, long term);
    }

    private final List<Engine> engines;
    private boolean leading;
    private long term;
    private boolean cutOff;

    /** @param engines each engine's setLeading */
    public EngineLeadership(List<Engine> engines) {
        this.engines = List.copyOf(engines);
    }

    /** Ratis' view changed: this node leads the shard now (in {@code term}), or not. */
    public synchronized void leading(boolean value, long term) {
        leading = value;
        this.term = term;
        tell();
    }

    /** The node found itself cut off, or in touch again. */
    public synchronized void cutOff(boolean value) {
        cutOff = value;
        tell();
    }

    private void tell() {
        boolean on = leading && !cutOff;
        engines.forEach(e -> e.setLeading(on, term));
    }
}
