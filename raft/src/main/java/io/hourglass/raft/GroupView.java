package io.hourglass.raft;

import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;

/**
 * This node's view of its Raft group, read from Ratis on each call: role, term and indices for
 * status and metrics, the leader's lease, readiness. Thread-safe: its one piece of state is
 * whether this follower was ready at the last look.
 */
final class GroupView {
    /** Committed entries a follower may still have to apply and count as caught up. */
    static final long READY_MAX_LAG = 100;
    /**
     * Once ready, a follower stays ready until it lags by more than this many entries (or loses
     * its leader): a node just restarted under load, its JIT still cold, may fall a little over
     * {@link #READY_MAX_LAG} behind for a moment, and a probe that flapped would have a rolling
     * restart move on and then see the node it just waited for "not ready".
     */
    static final long READY_DROP_LAG = 10 * READY_MAX_LAG;

    private final RaftConfig config;
    private final RaftServer server;
    private final org.apache.ratis.protocol.RaftGroupId groupId;
    /** Whether this follower was ready at the last look (the hysteresis of READY_DROP_LAG). */
    private volatile boolean followerReady;

    GroupView(RaftConfig config, RaftServer server, org.apache.ratis.protocol.RaftGroupId groupId) {
        this.config = config;
        this.server = server;
        this.groupId = groupId;
    }

    /** This node's division of the group, or null while it has none (a joining node before it is added). */
    RaftServer.Division division() {
        try {
            return server.getDivision(groupId);
        } catch (IOException e) {
            return null;
        }
    }

    /** The leader this node knows of, or null. */
    RaftPeerId leaderId() {
        try {
            return server.getDivision(groupId).getInfo().getLeaderId();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * The leader this node may send clients to: itself while it leads, else the leader it follows if it
     * heard from it within {@code silentMs}; null otherwise (none known, or one gone quiet: dead, paused
     * or cut off, and not yet replaced in this node's view).
     */
    RaftPeerId liveLeaderId(long silentMs) {
        try {
            var info = server.getDivision(groupId).getInfo();
            RaftPeerId leader = info.getLeaderId();
            if (leader == null || info.isLeader()) {
                return leader;
            }
            var role = info.getRoleInfoProto(); // a candidate (or a node not yet following) names none
            return info.isFollower() && role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()
                    && role.getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs() < silentMs ? leader : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** The peers of the group's current configuration (voters and listeners), or none while it cannot be read. */
    java.util.Collection<org.apache.ratis.protocol.RaftPeer> peers() {
        try {
            return server.getDivision(groupId).getRaftConf().getAllPeers();
        } catch (IOException e) {
            return java.util.List.of();
        }
    }

    /**
     * A leader's lease: a majority (counting itself) answered within 90% of the minimum election
     * timeout. Each of them received an append after that answer's send time, which restarted its
     * election timer, so none can have started an election yet and no other leader can exist. The
     * 10% absorbs clock-rate differences.
     */
    boolean holdsLease() {
        try {
            var info = server.getDivision(groupId).getInfo();
            if (!info.isLeader()) {
                return false;
            }
            return answeredWithin(info, config.electionTimeoutMin().toMillis() * 9 / 10) == null;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Null when a majority of the voters (this leader counted) answered within {@code boundMs}, else
     * how many did.
     */
    private static String answeredWithin(DivisionInfo info, long boundMs) {
        var followers = info.getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
        long fresh = followers.stream().filter(f -> f.getLastRpcElapsedTimeMs() < boundMs).count();
        return (fresh + 1) * 2 > followers.size() + 1 ? null : "leading, but only " + (fresh + 1) + " of "
                + (followers.size() + 1) + " voters answered within " + boundMs + " ms";
    }

    /**
     * Why this node could not get a proposal committed at this moment, or null when it can: a
     * leader that has heard from no majority (itself included) within {@code boundMs}, a follower
     * that knows no leader or has heard from none within {@code boundMs} (see {@link ContactGuard}).
     */
    String outOfTouch(long boundMs) {
        try {
            var info = server.getDivision(groupId).getInfo();
            if (info.isLeader()) {
                return answeredWithin(info, boundMs);
            }
            RaftPeerId leader = info.getLeaderId();
            if (leader == null) {
                return "no leader known";
            }
            long contact = leaderContactMs(info);
            return contact < boundMs ? null : "no append from leader " + leader + " for " + contact + " ms";
        } catch (IOException e) {
            return "raft group not open";
        }
    }

    /**
     * Whether a majority of the voters, this node included, accept a TCP connection on their Raft
     * ports (all asked at once, for at most {@code timeoutMs}): a node that cannot reach one is the
     * one cut off (see {@link ContactGuard}).
     */
    boolean majorityReachable(int timeoutMs) {
        try {
            var peers = server.getDivision(groupId).getRaftConf().getCurrentPeers();
            int needed = peers.size() / 2 + 1;
            var others = peers.stream().filter(p -> !p.getId().equals(server.getId()))
                    .map(org.apache.ratis.protocol.RaftPeer::getAddress).toList();
            int self = others.size() < peers.size() ? 1 : 0;
            return self >= needed || self + TcpProbe.accepting(others, needed - self, timeoutMs) >= needed;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Ready to serve: a leader when {@code leaderReady} (it applied everything before its term), a
     * follower once it knows a leader it heard from lately and has applied all but at most
     * {@link #READY_MAX_LAG} of the entries the <em>leader</em> reports committed; once ready, it
     * stays ready until it is more than {@link #READY_DROP_LAG} behind or loses its leader.
     *
     * <p>The follower's own commit index is no measure: it cannot pass the end of its log, so a
     * node restarted after a few seconds down, at the leader's first append, has applied all it
     * knows of and would call itself ready while the entries it missed are still on their way. The
     * leader sends its commit index in every append this follower accepts (Ratis' commit infos);
     * until one has arrived since this process started, the follower does not know how far behind
     * it is. (A follower whose lost log its leader refuses to see is mended by {@link LostLogWatch}.)
     */
    Readiness readiness(boolean leaderReady) {
        try {
            var division = server.getDivision(groupId);
            var info = division.getInfo();
            Readiness r = followerReadiness(division, info, leaderReady);
            followerReady = r.ready() && !info.isLeader();
            return r;
        } catch (IOException e) {
            return Readiness.not("raft group not open: " + e.getMessage());
        }
    }

    private Readiness followerReadiness(RaftServer.Division division, DivisionInfo info, boolean leaderReady) {
        if (info.isLeader()) {
            return leaderReady ? Readiness.READY
                    : Readiness.not("elected leader, still applying the entries of earlier terms");
        }
        RaftPeerId leader = info.getLeaderId();
        if (leader == null) {
            return Readiness.not("no leader known");
        }
        long contact = leaderContactMs(info);
        if (contact >= config.followerStallTimeout().toMillis()) {
            return Readiness.not("no append from leader " + leader + " for " + contact + " ms");
        }
        long leaderCommit = commitIndexOf(leader, division.getCommitInfos());
        if (leaderCommit < 0) {
            return Readiness.not("waiting for leader " + leader + "'s commit index");
        }
        long committed = Math.max(leaderCommit, division.getRaftLog().getLastCommittedIndex());
        long behind = committed - info.getLastAppliedIndex();
        return behind <= (followerReady ? READY_DROP_LAG : READY_MAX_LAG) ? Readiness.READY
                : Readiness.not("catching up: " + behind + " committed entries not applied yet");
    }

    /** The commit index that {@code infos} (Ratis' commit infos) give for {@code peer}, or -1. */
    static long commitIndexOf(RaftPeerId peer, java.util.Collection<CommitInfoProto> infos) {
        var key = peer.toByteString();
        return infos.stream().filter(c -> c.getServer().getId().equals(key))
                .mapToLong(CommitInfoProto::getCommitIndex).max().orElse(-1);
    }

    /**
     * How long ago this follower last heard from its leader: a follower the leader stopped sending
     * to (a dead log appender, a partition) must not call itself ready on an old commit index.
     */
    static long leaderContactMs(DivisionInfo info) {
        var role = info.getRoleInfoProto();
        return role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()
                ? role.getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs() : 0;
    }

    /**
     * What a follower knows of its leader's progress, for {@link LostLogWatch}: null while this
     * node leads or knows no leader.
     */
    FollowerProgress followerProgress() {
        try {
            var division = server.getDivision(groupId);
            var info = division.getInfo();
            RaftPeerId leader = info.getLeaderId();
            if (info.isLeader() || leader == null) {
                return null;
            }
            return new FollowerProgress(leader.toString(), leaderContactMs(info), division.getRaftLog().getNextIndex() - 1);
        } catch (IOException e) {
            return null;
        }
    }

    /** See {@link LostLogWatch#suspect}. */
    record FollowerProgress(String leaderId, long leaderContactMs, long logEnd) {
    }

    RaftNode.Status status() {
        try {
            var division = server.getDivision(groupId);
            var info = division.getInfo();
            Map<String, Long> match = new TreeMap<>();
            Map<String, Long> contact = new TreeMap<>();
            if (info.isLeader()) {
                var followers = info.getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
                long[] indices = info.getFollowerMatchIndices();
                for (int i = 0; i < followers.size(); i++) {
                    String id = followers.get(i).getId().getId().toStringUtf8();
                    contact.put(id, followers.get(i).getLastRpcElapsedTimeMs());
                    if (i < indices.length) {
                        match.put(id, indices[i]);
                    }
                }
            }
            RaftPeerId leader = info.getLeaderId();
            var role = info.getCurrentRole(); // null while the division is being made (a joining node)
            return new RaftNode.Status(config.nodeId(), role == null ? "UNKNOWN" : role.name(),
                    leader == null ? null : leader.toString(),
                    info.getCurrentTerm(), division.getRaftLog().getLastCommittedIndex(), info.getLastAppliedIndex(),
                    match, contact);
        } catch (IOException e) {
            return new RaftNode.Status(config.nodeId(), "UNKNOWN", null, -1, -1, -1, Map.of(), Map.of());
        }
    }
}
