package io.hourglass.server.config;

import io.hourglass.core.config.ConfigKey;
import io.hourglass.core.config.ConfigSection;
import io.hourglass.core.config.Settings;
import io.hourglass.raft.RaftConfig;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The keys of {@link RaftConfig} ({@code cluster.*}, {@code raft.*}), declared in the server because the
 * raft module's record does not know the registry; {@link #read} builds the record from them.
 */
public final class RaftKeys {
    public static final ConfigKey<Integer> PORT = ConfigKey.integer(
            "raft.port", 7071, 0, 65_535,
            "Raft port, for replication between nodes; followers too far behind the leader's log also download "
                    + "its store checkpoint here. Keep it reachable between nodes only. (--raft-port)");
    public static final ConfigKey<String> PEERS = ConfigKey.string(
            "cluster.peers", "", RaftConfig::parsePeers,
            "Every voter of the group, this node included, as id=host:raftPort:grpcPort separated by commas, e.g. "
                    + "n1=10.0.0.1:7071:7070,n2=10.0.0.2:7071:7070,n3=10.0.0.3:7071:7070. Empty: standalone, a "
                    + "group of one. (--peers)");
    public static final ConfigKey<Boolean> JOIN = ConfigKey.flag(
            "cluster.join", false,
            "Start empty and wait to be added to a running cluster with "
                    + "'hourglass cluster add-node ID=HOST:RAFTPORT:GRPCPORT'. (--join)");
    public static final ConfigKey<Duration> ELECTION_TIMEOUT_MIN = ConfigKey.duration(
            "raft.electionTimeoutMin", "1s", "100ms",
            "A follower that hears no leader for a random time between raft.electionTimeoutMin and "
                    + "raft.electionTimeoutMax starts an election (pre-vote is on).");
    public static final ConfigKey<Duration> ELECTION_TIMEOUT_MAX = ConfigKey.duration(
            "raft.electionTimeoutMax", "2s", "200ms",
            "The upper end of the random election timeout; it must be greater than raft.electionTimeoutMin.");
    public static final ConfigKey<Duration> REQUEST_TIMEOUT = ConfigKey.duration(
            "raft.requestTimeout", "5s", "100ms",
            "A proposal not committed within this time fails with UNAVAILABLE.");
    public static final ConfigKey<Integer> SNAPSHOT_EVERY_ENTRIES = ConfigKey.integer(
            "raft.snapshotEveryEntries", 10_000, 100, Integer.MAX_VALUE,
            "Take a snapshot (and purge the Raft log behind it) after this many applied entries.");
    public static final ConfigKey<Integer> PURGE_GAP = ConfigKey.integer(
            "raft.purgeGap", 1024, 1, Integer.MAX_VALUE,
            "Log entries kept behind a snapshot before purging them is worth doing.");
    public static final ConfigKey<Integer> LOG_SEGMENT_BYTES = ConfigKey.integer(
            "raft.logSegmentBytes", 8 << 20, 64 << 10, Integer.MAX_VALUE,
            "Size in bytes of one Raft log segment file; only closed segments can be purged.");
    public static final ConfigKey<Duration> FOLLOWER_STALL_TIMEOUT = ConfigKey.duration(
            "raft.followerStallTimeout", "30s", "1s",
            "A follower behind the commit index whose match index has not moved for this long is reported as not "
                    + "catching up: a WARN on the leader, `hourglass_raft_follower_stalled{follower}` = 1, `stalled` "
                    + "in `cluster status`; its own `/readyz` fails once it has not heard from a leader for this "
                    + "long.");
    public static final ConfigKey<Duration> LOST_LOG_TIMEOUT = ConfigKey.duration(
            "raft.lostLogTimeout", "5s", "1s",
            "A follower whose leader has committed past the end of its log, yet appended nothing to it for this "
                    + "long while no checkpoint is being installed, asks the leader to step down (a WARN, "
                    + "`hourglass_raft_lost_log_step_down_requests_total`): the leader still counts on a log the "
                    + "node no longer has (its data directory was wiped and it restarted under the same id), and "
                    + "the next leader starts from the log's real end. A follower whose downloaded checkpoint has waited "
                    + "this long for the leader's next install notice (which installs it) asks the same (a WARN, "
                    + "`hourglass_raft_pending_install_step_down_requests_total`).");
    public static final ConfigKey<Duration> LEADER_EXIT_STAGGER = ConfigKey.duration(
            "raft.leaderExitStagger", "300ms", "0ms",
            "When the connection that carried the leader's appends closes and the leader's Raft port then refuses connections (its "
                    + "process is gone: killed, crashed, stopped), the followers start an election at once instead of "
                    + "after the election timeout, the one whose log ends last first, then by id, this far apart, each only if no new "
                    + "leader has appeared by then (two at once would split the vote). The same goes for a paused or "
                    + "cut-off leader once followers that have not heard from it for raft.electionTimeoutMin make a "
                    + "majority. 0 turns both off. A Subscribe that reaches a node while no leader is known (an "
                    + "election under way) waits this long for the outcome before the client is sent to another server.");
    public static final ConfigKey<Duration> HAND_OVER_TIMEOUT = ConfigKey.duration(
            "raft.handOverTimeout", "3s", "0ms",
            "A leader shutting down (SIGTERM, a rolling restart) first transfers its leadership to its most "
                    + "caught-up follower that answered lately, which is elected at once, and waits at most this long "
                    + "for it; a publish waiting meanwhile is retried by the client against the new leader. 0 turns it "
                    + "off: the followers then elect a new leader as soon as the old one's port closes "
                    + "(raft.leaderExitStagger).");
    public static final ConfigKey<Duration> MAX_CLOCK_SKEW = ConfigKey.duration(
            "raft.maxClockSkew", "500ms", "0ms",
            "Every node reads the other voters' clocks once a second over the Raft port. A node whose clock a "
                    + "majority of the voters see off by more than this (plus half the reading's round trip) stamps no "
                    + "entries: its proposals fail UNAVAILABLE and a leader hands its leadership over, until its "
                    + "clock is set right (an ERROR in the log, `hourglass_clock_offset_ms`). The leader's clock is "
                    + "replicated time: due times and TTLs count from it, so this bounds how early a message can be "
                    + "delivered or expired. 0 turns it off.");
    public static final ConfigKey<Integer> MAX_CHECKPOINT_DOWNLOADS = ConfigKey.integer(
            "raft.maxCheckpointDownloads", 2, 1, 64,
            "Store checkpoints this node serves at once to followers too far behind its log; they are downloaded "
                    + "over the Raft port (never the client port), each only as fast as the follower reads it. A "
                    + "follower asking beyond it is told UNAVAILABLE and retries.");

    public static final ConfigKey<Integer> PUBLISH_ENTRIES_IN_FLIGHT = ConfigKey.integer(
            "raft.publishEntriesInFlight", 1, 1, 1024,
            "Publish log entries the leader replicates at once; publish requests arriving meanwhile wait and then "
                    + "share one entry (group commit, up to limits.maxBatchBytes): more keeps the Raft pipeline "
                    + "fuller, fewer makes entries larger and fewer. With 1 (measured on 2 cores, 3 nodes, 1 KiB "
                    + "messages, against 4) publish→deliver p50 at a paced 1000 msg/s halves and throughput and CPU "
                    + "per message improve: each entry costs RPCs, fsync shares, an apply and a dispatch pass.");

    public static final ConfigKey<Integer> SHARDS = ConfigKey.integer(
            "cluster.shards", 1, 1, io.hourglass.raft.RaftHost.MAX_SHARDS,
            "Event shards: Raft groups that each order the commands of the topics whose name hashes onto them "
                    + "(xxHash64 of the name, modulo this count), all in the one Raft server of each node, so that "
                    + "several leaders share the work. Fixed when a cluster is created (recorded in each node's data "
                    + "directory; a start with another count is refused) and the same on every node. Rooms hash "
                    + "onto shards the same way.");
    public static final ConfigKey<Boolean> METADATA_GROUP = ConfigKey.flag(
            "cluster.metadataGroup", true,
            "Whether a new cluster gets a metadata Raft group next to its event shards, holding what belongs to no "
                    + "topic or room: the peer registry (members' client addresses) and the security state (principals, "
                    + "tokens, grants). Membership changes go to it first. Fixed when a cluster is created, like "
                    + "cluster.shards: a data directory created before the metadata group keeps that state in shard 0 "
                    + "whatever this says, and nodes added to such a cluster need false. Off: shard 0 holds it.");
    public static final ConfigKey<Boolean> WARM_UP = ConfigKey.flag(
            "raft.warmUp", true,
            "At start, run the Raft leader's code once in three throwaway servers inside this node's JVM (ports of "
                    + "their own on the node's Raft host, with the peer TLS when set, a directory under the data dir; a "
                    + "few seconds of one core, then closed and deleted), so that this node's first leadership in a failover does "
                    + "not wait for the JVM to load that code (measured: 100-150 ms of a kill -9 failover on 2 "
                    + "cores); then the delivery engine's leader side once over a throwaway store (3 000 messages "
                    + "delivered, NACKed, ACKed and deleted in memory-replicated entries; under a second; its "
                    + "warmup-delivery directory deleted), which took a first leadership 200-700 ms to register its "
                    + "first consumer. Off: nothing is run.");

    public static final ConfigKey<Duration> APPEND_WAIT_MIN = ConfigKey.duration(
            "raft.appendWaitMin", "5ms", "0ms",
            "The least time the leader leaves between two append requests to one follower (Ratis' "
                    + "raft.server.log.appender.wait-time.min, 10 ms there): entries that arrive meanwhile share the "
                    + "next request. Measured on 2 cores, 3 nodes, 1 KiB, against Ratis' 10 ms: 5 ms cuts "
                    + "publish→deliver p50 at a paced 1000 msg/s from 43 to 25 ms for 16 % more CPU per message at "
                    + "that rate, with publish throughput as high or higher; 0 sends every entry at once and costs "
                    + "about 30 % more CPU for no lower latency.");

    /** The keys, in the order the configuration reference lists them. */
    public static final ConfigSection SECTION = ConfigSection.of("Cluster and Raft", PORT, PEERS, JOIN,
            ELECTION_TIMEOUT_MIN, ELECTION_TIMEOUT_MAX, REQUEST_TIMEOUT, SNAPSHOT_EVERY_ENTRIES, PURGE_GAP,
            LOG_SEGMENT_BYTES, FOLLOWER_STALL_TIMEOUT, LOST_LOG_TIMEOUT, LEADER_EXIT_STAGGER, HAND_OVER_TIMEOUT,
            MAX_CLOCK_SKEW, MAX_CHECKPOINT_DOWNLOADS, PUBLISH_ENTRIES_IN_FLIGHT, APPEND_WAIT_MIN, WARM_UP, SHARDS,
            METADATA_GROUP);

    private RaftKeys() {
    }

    /** The Raft settings of node {@code nodeId}, its Raft log and checkpoints under {@code dataDir}. */
    public static RaftConfig read(Settings s, String nodeId, Path dataDir, RaftConfig.PeerTls peerTls) {
        long minFreeDisk = NodeConfig.MIN_FREE_DISK_MB.read(s) * RaftConfig.MIB;
        return new RaftConfig(nodeId, RaftConfig.parsePeers(PEERS.read(s)), PORT.read(s), dataDir.resolve("ratis"),
                ELECTION_TIMEOUT_MIN.read(s), ELECTION_TIMEOUT_MAX.read(s), REQUEST_TIMEOUT.read(s),
                SNAPSHOT_EVERY_ENTRIES.read(s), PURGE_GAP.read(s), LOG_SEGMENT_BYTES.read(s),
                FOLLOWER_STALL_TIMEOUT.read(s), LOST_LOG_TIMEOUT.read(s), LEADER_EXIT_STAGGER.read(s),
                HAND_OVER_TIMEOUT.read(s), MAX_CLOCK_SKEW.read(s), dataDir.resolve("checkpoints"), MAX_CHECKPOINT_DOWNLOADS.read(s),
                JOIN.read(s), peerTls, minFreeDisk, APPEND_WAIT_MIN.read(s));
    }
}
