package io.hourglass.raft;

import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.ratis.proto.RaftProtos.RaftGroupIdProto;
import org.apache.ratis.proto.RaftProtos.RaftRpcRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionReplyProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.thirdparty.io.grpc.Attributes;
import org.apache.ratis.thirdparty.io.grpc.ServerTransportFilter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Elects a new leader at once when the leader's process is gone, instead of after the election
 * timeout (1–2 s by default).
 *
 * <p>The signal is a connection into this node's Raft port closing: {@code kill -9} (or a crash)
 * closes every socket of the process, the leader's append stream to this follower among them. It
 * is only a hint, since a leader also reopens streams now and then, so it is confirmed: the leader's
 * Raft port must refuse a new TCP connection, i.e. nothing listens there any more. A leader that is
 * paused (SIGSTOP), cut off by dropped packets or just slow never refuses, so those cases wait out
 * the election timeout as before, pre-vote included, and a busy machine gets no extra elections.
 *
 * <p>The follower then asks its own Raft server to start an election, through the request a leader
 * sends its chosen successor in a leadership transfer ({@code startLeaderElection}, naming the gone
 * leader, which Ratis accepts only while that leader is still this follower's leader in this term
 * and this follower's log holds the term's last entry). The election skips pre-vote and runs for the
 * next term, which the other followers grant if the candidate's log is as complete as theirs.
 *
 * <p>Two followers forcing elections at the same moment would split the vote. So the followers go
 * one by one, {@code stagger} apart, the most caught-up first ({@link #rank}), each only if the gone
 * leader is still its leader and its port still refuses by then.
 */
final class LeaderExitWatch extends ServerTransportFilter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderExitWatch.class);
    private static final int CONNECT_TIMEOUT_MS = 300;

    private final String nodeId;
    private final Supplier<RaftServer> server;
    private final RaftGroupId groupId;
    private final Function<String, String> raftAddressOf;
    private final ScheduledExecutorService executor;
    private final Duration stagger;
    private final boolean enabled;
    private final AtomicBoolean probing = new AtomicBoolean();
    private final AtomicLong elections = new AtomicLong();

    /**
     * @param server this node's Raft server, once built (the watch is installed on its port before)
     * @param stagger how long the next follower by id waits; zero turns the watch off
     */
    LeaderExitWatch(String nodeId, Supplier<RaftServer> server, RaftGroupId groupId,
                    Function<String, String> raftAddressOf, Duration stagger) {
        this.nodeId = nodeId;
        this.server = server;
        this.groupId = groupId;
        this.raftAddressOf = raftAddressOf;
        this.stagger = stagger;
        this.enabled = !stagger.isZero();
        this.executor = Daemons.scheduler("hourglass-leader-exit-" + nodeId);
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }

    /** Elections this node started because its leader's process was gone. */
    long elections() {
        return elections.get();
    }

    @Override
    public void transportTerminated(Attributes transportAttrs) {
        if (enabled && probing.compareAndSet(false, true)) {
            try {
                executor.execute(() -> look(0));
            } catch (RuntimeException e) { // shutting down
                probing.set(false);
            }
        }
    }

    /**
     * Commit indexes closer than this count as equal: each follower knows its own exactly and the
     * others' only as the leader last reported them, a few entries behind.
     */
    static final long CAUGHT_UP_MARGIN = 64;

    /**
     * How many followers of a gone {@code leader} start their election before {@code me}: those
     * more than {@link #CAUGHT_UP_MARGIN} entries further (by Ratis' commit infos), then, among the
     * ones level with it, those with a smaller id. A follower behind the others would only lose.
     * -1 when {@code me} is not a voter.
     */
    static int rank(String me, List<String> voters, String leader, Map<String, Long> commitIndexes) {
        if (!voters.contains(me) || me.equals(leader)) {
            return -1;
        }
        long mine = commitIndexes.getOrDefault(me, -1L);
        int before = 0;
        for (String other : voters) {
            if (other.equals(me) || other.equals(leader)) {
                continue;
            }
            long theirs = commitIndexes.getOrDefault(other, -1L);
            if (theirs > mine + CAUGHT_UP_MARGIN
                    || Math.abs(theirs - mine) <= CAUGHT_UP_MARGIN && other.compareTo(me) < 0) {
                before++;
            }
        }
        return before;
    }

    /** One look, on the watch thread: {@code round} 0 when a connection closed, then once per stagger. */
    private void look(int round) {
        boolean again = false;
        try {
            again = lookOnce(round);
        } catch (IOException | RuntimeException e) {
            LOG.debug("{}: leader exit check failed", nodeId, e);
        } finally {
            if (!again) {
                probing.set(false);
            }
        }
    }

    /** @return whether another look is scheduled */
    private boolean lookOnce(int round) throws IOException {
        RaftServer server = this.server.get();
        if (server == null) {
            return false;
        }
        RaftServer.Division division = server.getDivision(groupId);
        DivisionInfo info = division.getInfo();
        RaftPeerId leader = info.getLeaderId();
        if (!info.isFollower() || leader == null || leader.equals(server.getId())) {
            return false;
        }
        String address = raftAddressOf.apply(leader.toString());
        if (address == null || TcpProbe.connect(address, CONNECT_TIMEOUT_MS) != TcpProbe.REFUSED) {
            return false;
        }
        Map<String, Long> commits = new HashMap<>();
        for (var c : division.getCommitInfos()) {
            commits.merge(RaftPeerId.valueOf(c.getServer().getId()).toString(), c.getCommitIndex(), Math::max);
        }
        int rank = rank(nodeId, division.getRaftConf().getCurrentPeers().stream().map(RaftPeer::getId)
                .map(RaftPeerId::toString).toList(), leader.toString(), commits);
        if (rank < 0) {
            return false; // not a voter
        }
        if (round < rank) {
            executor.schedule(() -> look(round + 1), stagger.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        }
        TermIndex last = division.getRaftLog().getLastEntryTermIndex();
        long term = info.getCurrentTerm();
        if (last == null || last.getTerm() != term) {
            LOG.info("{}: leader {}'s Raft port {} refuses connections, but this node's log lacks an entry of term {}:"
                    + " leaving the election to the timeout", nodeId, leader, address, term);
            return false;
        }
        StartLeaderElectionRequestProto request = StartLeaderElectionRequestProto.newBuilder()
                .setServerRequest(RaftRpcRequestProto.newBuilder()
                        .setRequestorId(leader.toByteString())
                        .setReplyId(server.getId().toByteString())
                        .setRaftGroupId(RaftGroupIdProto.newBuilder().setId(groupId.toByteString())))
                .setLeaderLastEntry(last.toProto())
                .build();
        StartLeaderElectionReplyProto reply = server.startLeaderElection(request);
        if (reply.getServerReply().getSuccess()) {
            elections.incrementAndGet();
            LOG.info("{}: leader {}'s Raft port {} refuses connections, so its process is gone: started an election"
                    + " for term {} at once (last entry {})", nodeId, leader, address, term + 1, last);
        } else {
            LOG.info("{}: leader {} is gone, but Raft refused to start an election now; the timeout will", nodeId,
                    leader);
        }
        return false;
    }
}
