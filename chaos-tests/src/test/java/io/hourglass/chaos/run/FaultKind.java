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
    TRANSFER_LEADER("transfer-leader", false),
    /**
     * Every node's link slow and lossy, then healed: tc netem 50–200 ms delay with jitter and 5 % loss;
     * on a kernel without netem (this machine's), 1 Mbit/s with up to that much queue and 5 % random
     * drops (nftables).
     */
    SLOW_NETWORK("slow-net", true),
    /**
     * A seeded follower restarted with its wall clock minutes ahead or behind (libfaketime), made
     * leader through the Admin API, then restarted with a true clock.
     */
    CLOCK_SKEW("clock-skew", false, true),
    /**
     * A seeded follower killed and its Raft log damaged, seeded: a byte flipped inside an entry (it
     * must refuse to start, exit 65; then it is wiped and restarted empty) or the open segment cut
     * inside its last entry (a torn write it repairs on its own).
     */
    CORRUPT_LOG("corrupt-log", false),
    /**
     * The file system of one node's data directory (a tmpfs, the last voter's) filled up, whatever
     * that node's role: it must stop (exit 70); started again once the space is back, it catches up.
     */
    DISK_FULL("disk-full", false);

    private final String label;
    private final boolean needsNetwork;
    private final boolean needsFaketime;

    FaultKind(String label, boolean needsNetwork) {
        this(label, needsNetwork, false);
    }

    FaultKind(String label, boolean needsNetwork, boolean needsFaketime) {
        this.label = label;
        this.needsNetwork = needsNetwork;
        this.needsFaketime = needsFaketime;
    }

    /** Needs libfaketime (Debian's faketime package). */
    boolean needsFaketime() {
        return needsFaketime;
    }

    String label() {
        return label;
    }

    /** Needs nodes in separate network namespaces. */
    boolean needsNetwork() {
        return needsNetwork;
    }
}
