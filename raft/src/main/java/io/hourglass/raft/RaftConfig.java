package io.hourglass.raft;

import io.hourglass.core.config.ConfigException;
import io.hourglass.core.config.Settings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Raft settings of a node.
 *
 * @param nodeId {@code node.id} (n1): this node's id, one of the peers
 * @param peers {@code cluster.peers}: every voter as {@code id=host:raftPort:grpcPort}; empty = standalone
 * @param raftPort {@code raft.port} (7071)
 * @param storageDir where Ratis keeps its log: {@code <data dir>/ratis}
 * @param electionTimeoutMin {@code raft.electionTimeoutMin} (1s); pre-vote is on
 * @param electionTimeoutMax {@code raft.electionTimeoutMax} (2s)
 * @param requestTimeout {@code raft.requestTimeout} (5s): a proposal not committed by then fails UNAVAILABLE
 * @param snapshotEveryEntries {@code raft.snapshotEveryEntries} (10000): automatic snapshot (and log purge) after this many entries
 * @param purgeGap {@code raft.purgeGap} (1024): log entries kept before a purge is worth doing
 * @param logSegmentBytes {@code raft.logSegmentBytes} (8388608): size of one Raft log segment file; only closed segments are purged
 * @param followerStallTimeout {@code raft.followerStallTimeout} (30s): a follower behind the commit index whose
 *        match index has not moved for this long is reported as not catching up (WARN, metric, cluster status)
 * @param lostLogTimeout {@code raft.lostLogTimeout} (5s): a follower whose leader has committed past this
 *        node's log end yet appended nothing for this long asks it to step down (see LostLogWatch)
 * @param leaderExitStagger {@code raft.leaderExitStagger} (300ms; 0 = off): a follower seeing its leader's
 *        process gone, or silent for electionTimeoutMin to a majority, starts an election at once, the next
 *        follower this much later (see LeaderExitWatch)
 * @param handOverTimeout {@code raft.handOverTimeout} (3s; 0 = off): a leader closing (SIGTERM) first
 *        transfers its leadership to its most caught-up follower, waiting at most this long
 * @param maxClockSkew {@code raft.maxClockSkew} (500ms; 0 = off): a node whose clock a majority of the voters
 *        see off by more stamps no entries and hands its leadership over (see ClockWatch)
 * @param checkpointDir where checkpoints are made for, and downloaded from, other nodes: {@code <data dir>/checkpoints}
 * @param maxCheckpointDownloads {@code raft.maxCheckpointDownloads} (2): checkpoints this node serves at once
 * @param join {@code cluster.join} (false, flag {@code --join}): start empty and wait to be added
 *        to a running cluster with {@code hourglass cluster add-node}
 * @param peerTls mutual TLS between nodes on the Raft port (replication, admin, checkpoint
 *        download), or null for plain text
 * @param minFreeDiskBytes {@code node.minFreeDiskMb} (128 MiB; 0 = off): a node stops once the file system
 *        of its data has less free space, and does not start with less (see {@code io.hourglass.raft.disk})
 * @param appendWaitMin {@code raft.appendWaitMin} (5ms): the least time between two append requests
 *        a leader sends one follower (Ratis' {@code raft.server.log.appender.wait-time.min})
 */
public record RaftConfig(String nodeId, List<Peer> peers, int raftPort, Path storageDir, Duration electionTimeoutMin,
                         Duration electionTimeoutMax, Duration requestTimeout, long snapshotEveryEntries, int purgeGap,
                         long logSegmentBytes, Duration followerStallTimeout, Duration lostLogTimeout, Duration leaderExitStagger,
                         Duration handOverTimeout, Duration maxClockSkew, Path checkpointDir, int maxCheckpointDownloads,
                         boolean join, PeerTls peerTls, long minFreeDiskBytes, Duration appendWaitMin) {

    /**
     * This node's certificate and key and the CA that signs every node's (PEM files, reloaded when
     * they change): peers are admitted by certificate only, never by client credentials.
     */
    public record PeerTls(Path certFile, Path keyFile, Path caFile, Duration reloadEvery) {
    }

    /** A voter of the group. */
    public record Peer(String id, String host, int raftPort, int grpcPort) {
        public String raftAddress() {
            return host + ":" + raftPort;
        }

        public String grpcAddress() {
            return host + ":" + grpcPort;
        }
    }

    /** {@code node.minFreeDiskMb}'s default. */
    public static final int DEFAULT_MIN_FREE_DISK_MB = 128;
    /** Bytes in a MiB, the unit of {@code node.minFreeDiskMb}. */
    public static final long MIB = 1L << 20;
    /** {@code raft.appendWaitMin}'s default. */
    public static final Duration DEFAULT_APPEND_WAIT_MIN = Duration.ofMillis(5);

    public RaftConfig {
        peers = List.copyOf(peers);
        if (electionTimeoutMax.compareTo(electionTimeoutMin) <= 0) {
            throw new ConfigException("raft.electionTimeoutMax must be greater than raft.electionTimeoutMin");
        }
        if (appendWaitMin.isNegative()) {
            throw new ConfigException("raft.appendWaitMin must not be negative");
        }
        if (minFreeDiskBytes < 0) {
            throw new ConfigException("node.minFreeDiskMb must not be negative");
        }
        if (!peers.isEmpty() && peers.stream().noneMatch(p -> p.id().equals(nodeId))) {
            throw new ConfigException("node.id " + nodeId + " is not one of cluster.peers " + peers);
        }
    }

    public static RaftConfig from(Settings s, Path dataDir, int grpcPort) {
        String nodeId = s.string("node.id", "n1");
        int raftPort = s.integer("raft.port", 7071, 0, 65_535);
        return new RaftConfig(nodeId, parsePeers(s.string("cluster.peers", "")), raftPort, dataDir.resolve("ratis"),
                s.duration("raft.electionTimeoutMin", Duration.ofSeconds(1), Duration.ofMillis(100)),
                s.duration("raft.electionTimeoutMax", Duration.ofSeconds(2), Duration.ofMillis(200)),
                s.duration("raft.requestTimeout", Duration.ofSeconds(5), Duration.ofMillis(100)),
                s.integer("raft.snapshotEveryEntries", 10_000, 100, Integer.MAX_VALUE),
                s.integer("raft.purgeGap", 1024, 1, Integer.MAX_VALUE),
                s.integer("raft.logSegmentBytes", 8 << 20, 64 << 10, Integer.MAX_VALUE),
                s.duration("raft.followerStallTimeout", Duration.ofSeconds(30), Duration.ofSeconds(1)),
                s.duration("raft.lostLogTimeout", Duration.ofSeconds(5), Duration.ofSeconds(1)),
                s.duration("raft.leaderExitStagger", Duration.ofMillis(300), Duration.ZERO),
                s.duration("raft.handOverTimeout", Duration.ofSeconds(3), Duration.ZERO),
                s.duration("raft.maxClockSkew", Duration.ofMillis(500), Duration.ZERO),
                dataDir.resolve("checkpoints"),
                s.integer("raft.maxCheckpointDownloads", 2, 1, 64),
                Boolean.parseBoolean(s.string("cluster.join", "false")), null,
                s.integer("node.minFreeDiskMb", DEFAULT_MIN_FREE_DISK_MB, 0, Integer.MAX_VALUE) * MIB,
                s.duration("raft.appendWaitMin", DEFAULT_APPEND_WAIT_MIN, Duration.ZERO));
    }

    /** Parses {@code id=host:raftPort:grpcPort,...}. */
    public static List<Peer> parsePeers(String text) {
        List<Peer> peers = new ArrayList<>();
        if (text == null || text.isBlank()) {
            return peers;
        }
        for (String part : text.split(",")) {
            String p = part.trim();
            String[] idAddr = p.split("=", 2);
            String[] hostPorts = idAddr.length == 2 ? idAddr[1].split(":") : new String[0];
            if (idAddr.length != 2 || idAddr[0].isBlank() || hostPorts.length != 3) {
                throw new ConfigException("peer '" + p + "' is not of the form id=host:raftPort:grpcPort");
            }
            try {
                peers.add(new Peer(idAddr[0].trim(), hostPorts[0], Integer.parseInt(hostPorts[1]), Integer.parseInt(hostPorts[2])));
            } catch (NumberFormatException e) {
                throw new ConfigException("peer '" + p + "' has a port that is not a number");
            }
        }
        return peers;
    }

    /** The voters: the configured peers, or this node alone (standalone = a group of one). */
    public List<Peer> voters(String host, int grpcPort) {
        return peers.isEmpty() ? List.of(new Peer(nodeId, host, raftPort, grpcPort)) : peers;
    }
}
