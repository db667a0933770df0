package io.hourglass.raft;

/**
 * Told about every change of this node's leadership ({@link Leadership}), in epoch order, on the
 * node's one leadership thread. A listener must not block for long: the next change waits for it.
 * An exception it throws is logged and does not stop the others from hearing of the change.
 */
@FunctionalInterface
public interface LeadershipListener {
    void onLeadership(Leadership change);
}
