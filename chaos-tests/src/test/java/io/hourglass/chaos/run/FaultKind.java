package io.hourglass.chaos.run;

/** The faults a chaos run injects; {@link #label()} names them in the history and the summary. */
enum FaultKind {
    /** {@code kill -9} of the leader, restarted after a while. */
    KILL_LEADER("kill-leader", false),
    /** {@code kill -9} of a seeded node (leader or not), restarted after a while. */
    KILL_NODE("kill-node", false),
    /** {@code kill -9} of a majority at once: no quorum until they restart. */
    KILL_MAJORITY("kill-majority", false),
    /** SIGSTOP of the leader for longer than the election timeout, then SIGCONT. */
    PAUSE_LEADER("pause", false),
    /** The leader cut off every other node (clients still reach it), then healed. */
    PARTITION_LEADER("partition-leader", true),
    /** A seeded minority cut off the majority, then healed. */
    PARTITION_SPLIT("partition-split", true),
    /** A seeded node killed, its data directory deleted, restarted empty: it catches up from the leader. */
    WIPE_NODE("wipe-node", false),
    /** A new node started empty, added as a voter under load, then removed again. */
    MEMBERSHIP("membership", false),
    /** Leadership moved to a seeded node through the Admin API. */
    TRANSFER_LEADER("transfer-leader", false);

    private final String label;
    private final boolean needsNetwork;

    FaultKind(String label, boolean needsNetwork) {
        this.label = label;
        this.needsNetwork = needsNetwork;
    }

    String label() {
        return label;
    }

    /** Needs nodes in separate network namespaces. */
    boolean needsNetwork() {
        return needsNetwork;
    }
}
