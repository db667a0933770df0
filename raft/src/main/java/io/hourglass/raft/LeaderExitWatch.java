package io.hourglass.raft;

import io.hourglass.core.proto.LogEnd;
import io.hourglass.core.proto.LogEndRequest;
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
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
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
 * one by one, {@code stagger} apart, the one whose log ends last first ({@link #rank}: each asks the
 * others where their logs end, over the Raft port; a leader that is gone sends no more entries, so the
 * ends hold still), each only if the gone
 * leader is still its leader and its port still refuses by then.
 */
final class LeaderExitWatch extends ServerTransportFilter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderExitWatch.class);
    private static final int CONNECT_TIMEOUT_MS = 300;

    private final String nodeId;
    private final Supplier<RaftServer> server;
    private final RaftGroupId groupId;
    private final Function<String, String> raftAddressOf;
    private final PeerChannels peers;
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
                    Function<String, String> raftAddressOf, PeerChannels peers, Duration stagger) {
        this.nodeId = nodeId;
        this.peers = peers;
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

    static final String SERVICE = "hourglass.replica.Election";
    static final MethodDescriptor<LogEndRequest, LogEnd> LOG_END = MethodDescriptor.<LogEndRequest, LogEnd>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "LogEnd"))
            .setRequestMarshaller(new ProtoMarshaller<>(LogEndRequest.parser()))
            .setResponseMarshaller(new ProtoMarshaller<>(LogEnd.parser()))
            .build();
    /** How long the other followers have to tell their log ends; one that does not answer counts as behind. */
    private static final long LOG_END_DEADLINE_MS = 200;

    /** The service that tells the other followers where this node's log ends. */
    ServerServiceDefinition definition() {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(LOG_END, ServerCalls.asyncUnaryCall((LogEndRequest request, StreamObserver<LogEnd> out) -> {
                    out.onNext(logEnd());
                    out.onCompleted();
                }))
                .build();
    }

    private LogEnd logEnd() {
        RaftServer s = server.get();
        TermIndex last = null;
        try {
            last = s == null ? null : s.getDivision(groupId).getRaftLog().getLastEntryTermIndex();
        } catch (IOException e) {
            // no division yet: an empty log
        }
        return last == null ? LogEnd.newBuilder().setTerm(-1).setIndex(-1).build()
                : LogEnd.newBuilder().setTerm(last.getTerm()).setIndex(last.getIndex()).build();
    }

    /**
     * How many followers of a gone {@code leader} start their election before {@code me}: those whose
     * log ends later (term, then index; Raft's "at least as up to date"), then, among the ones ending
     * at the same entry, those with a smaller id. The first one's log is then as complete as every
     * other's, so they vote for it. A follower that did not tell its log end counts as behind.
     * -1 when {@code me} is not a voter.
     */
    static int rank(String me, List<String> voters, String leader, Map<String, LogEnd> ends) {
        if (!voters.contains(me) || me.equals(leader)) {
            return -1;
        }
        LogEnd mine = ends.getOrDefault(me, EMPTY);
        int before = 0;
        for (String other : voters) {
            if (other.equals(me) || other.equals(leader) || !ends.containsKey(other)) {
                continue;
            }
            int c = compare(ends.get(other), mine);
            if (c > 0 || c == 0 && other.compareTo(me) < 0) {
                before++;
            }
        }
        return before;
    }

    private static final LogEnd EMPTY = LogEnd.newBuilder().setTerm(-1).setIndex(-1).build();

    private static int compare(LogEnd a, LogEnd b) {
        return a.getTerm() != b.getTerm() ? Long.compare(a.getTerm(), b.getTerm()) : Long.compare(a.getIndex(), b.getIndex());
    }

    /** The log ends of the other followers that answer within {@link #LOG_END_DEADLINE_MS}, and this node's. */
    private Map<String, LogEnd> logEnds(List<String> voters, String leader) {
        Map<String, java.util.concurrent.CompletableFuture<LogEnd>> asked = new HashMap<>();
        for (String peer : voters) {
            if (peer.equals(nodeId) || peer.equals(leader)) {
                continue;
            }
            var channel = peers.of(peer);
            if (channel == null) {
                continue;
            }
            java.util.concurrent.CompletableFuture<LogEnd> answer = new java.util.concurrent.CompletableFuture<>();
            ClientCalls.asyncUnaryCall(channel.newCall(LOG_END,
                            CallOptions.DEFAULT.withDeadlineAfter(LOG_END_DEADLINE_MS, TimeUnit.MILLISECONDS)),
                    LogEndRequest.newBuilder().setRequester(nodeId).build(), new StreamObserver<>() {
                        @Override
                        public void onNext(LogEnd end) {
                            answer.complete(end);
                        }

                        @Override
                        public void onError(Throwable t) {
                            answer.completeExceptionally(t);
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
            asked.put(peer, answer);
        }
        Map<String, LogEnd> ends = new HashMap<>();
        ends.put(nodeId, logEnd());
        asked.forEach((peer, answer) -> {
            try {
                ends.put(peer, answer.get(LOG_END_DEADLINE_MS + 50, TimeUnit.MILLISECONDS));
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                LOG.info("{}: {} did not tell its log end ({}): counting it as behind", nodeId, peer, e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return ends;
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
        List<String> voters = division.getRaftConf().getCurrentPeers().stream().map(RaftPeer::getId)
                .map(RaftPeerId::toString).toList();
        Map<String, LogEnd> ends = logEnds(voters, leader.toString());
        int rank = rank(nodeId, voters, leader.toString(), ends);
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
