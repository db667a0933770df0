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
 * timeout (1–2 s by default), and as soon as a majority has stopped hearing from a leader that is
 * silent (cut off, paused), instead of after a pre-vote round that may be lost.
 *
 * <p><b>Gone.</b> The signal is a connection into this node's Raft port closing: {@code kill -9} (or
 * a crash) closes every socket of the process, the leader's append stream to this follower among
 * them. It is only a hint, since a leader also reopens streams now and then, so it is confirmed: the
 * leader's Raft port must refuse a new TCP connection, i.e. nothing listens there any more. A
 * process being killed closes its sockets one by one, the listening one possibly after the
 * connection that woke this watch: a port that still accepts is asked again, {@link #RECHECK_MS}
 * apart, up to {@link #RECHECKS} times.
 *
 * <p><b>Silent.</b> A leader that is paused (SIGSTOP) or cut off by dropped packets never refuses,
 * and Ratis' own election after the timeout can lose a whole round: a candidate whose log is
 * shorter loses the pre-vote, then waits for the silent leader's answer until its round times out
 * (seen: 3–4 s). So a follower that has heard nothing from its leader for {@code silence}
 * ({@code raft.electionTimeoutMin}: no earlier than Ratis' pre-vote would let a follower vote)
 * asks the other followers where their logs end and how long their own leader has been silent. Only
 * when enough of them — itself included, a majority of the voters — follow no leader or the same
 * one, silent for at least 9/10 of {@code silence}, does it go on; a follower that is itself cut off
 * reaches nobody and leaves the election to Ratis (whose pre-vote the others refuse), and one whose
 * leader still talks to the others does nothing.
 *
 * <p>The follower then asks its own Raft server to start an election, through the request a leader
 * sends its chosen successor in a leadership transfer ({@code startLeaderElection}, naming the old
 * leader, which Ratis accepts only while that leader is still this follower's leader in this term
 * and this follower's log holds the term's last entry). The election skips pre-vote and runs for the
 * next term, which the other followers grant if the candidate's log is as complete as theirs.
 *
 * <p>Two followers forcing elections at the same moment would split the vote. So the followers go
 * one by one, {@code stagger} apart, the one whose log ends last first ({@link #rank}: each asks the
 * others where their logs end, over the Raft port; a leader that is gone or cut off sends no more
 * entries, so the ends hold still), each only if the old leader is still its leader and still gone
 * or silent by then.
 */
final class LeaderExitWatch extends ServerTransportFilter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderExitWatch.class);
    private static final int CONNECT_TIMEOUT_MS = 300;
    /** After a connection closed, how often and how far apart a leader's port that still accepts is asked again. */
    static final int RECHECKS = 5;
    static final long RECHECK_MS = 20;

    private final String nodeId;
    private final Supplier<RaftServer> server;
    private final RaftGroupId groupId;
    /** The event shard of {@link #groupId}, named in the log-end questions to the other nodes. */
    private final int shard;
    private final Function<String, String> raftAddressOf;
    private final PeerChannels peers;
    private final ScheduledExecutorService executor;
    private final Duration stagger;
    private final long silenceMs;
    private final boolean enabled;
    private final AtomicBoolean probing = new AtomicBoolean();
    private final AtomicLong elections = new AtomicLong();
    private final AtomicLong silenceElections = new AtomicLong();
    /** Closed connections that made this node look at its leader's port. */
    private final AtomicLong closeLooks = new AtomicLong();

    /** What made this node look at its leader. */
    enum Cause {
        /** A connection into the Raft port closed: the leader's process may be gone. */
        CLOSED,
        /** Nothing from the leader for {@code silence}. */
        SILENT
    }

    /**
     * @param server this node's Raft server, once built (the watch is installed on its port before)
     * @param stagger how long the next follower by id waits; zero turns the watch off
     * @param silence how long a leader must have been silent before the followers elect another
     *        ({@code raft.electionTimeoutMin}); zero looks for gone leaders only
     */
    LeaderExitWatch(String nodeId, Supplier<RaftServer> server, RaftGroupId groupId, int shard,
                    Function<String, String> raftAddressOf, PeerChannels peers, Duration stagger, Duration silence) {
        this.nodeId = nodeId;
        this.shard = shard;
        this.silenceMs = silence.toMillis();
        this.peers = peers;
        this.server = server;
        this.groupId = groupId;
        this.raftAddressOf = raftAddressOf;
        this.stagger = stagger;
        this.enabled = !stagger.isZero();
        this.executor = Daemons.scheduler("hourglass-leader-exit-" + nodeId + (shard == 0 ? "" : "-" + shard));
    }

    /** Starts looking for a silent leader every {@link #SILENCE_TICK_MS}. */
    void start() {
        if (enabled && silenceMs > 0) {
            executor.scheduleWithFixedDelay(this::silenceTick, SILENCE_TICK_MS, SILENCE_TICK_MS, TimeUnit.MILLISECONDS);
        }
    }

    private static final long SILENCE_TICK_MS = 100;

    @Override
    public void close() {
        executor.shutdownNow();
    }

    /** Elections this node started because its leader's process was gone. */
    long elections() {
        return elections.get();
    }

    /** Elections this node started because a majority had not heard from its leader for the silence. */
    long silenceElections() {
        return silenceElections.get();
    }

    /** Closed connections that made this node look at its leader's port (tests). */
    long closeLooks() {
        return closeLooks.get();
    }

    /** A connection that carried a leader's appends closed ({@link AppendTransports} passes on no other). */
    @Override
    public void transportTerminated(Attributes transportAttrs) {
        if (enabled && probing.compareAndSet(false, true)) {
            closeLooks.incrementAndGet();
            try {
                executor.execute(() -> look(0, Cause.CLOSED, 0));
            } catch (RuntimeException e) { // shutting down
                probing.set(false);
            }
        }
    }

    private void silenceTick() {
        try {
            RaftServer s = server.get();
            if (s == null || probing.get()) {
                return;
            }
            DivisionInfo info = s.getDivision(groupId).getInfo();
            if (info.isFollower() && info.getLeaderId() != null && GroupView.leaderContactMs(info) >= silenceMs
                    && probing.compareAndSet(false, true)) {
                look(0, Cause.SILENT, 0);
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("{}: leader silence check failed", nodeId, e);
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

    /**
     * The service that tells the other followers where this node's log of a shard ends; a shard this
     * node does not hold answers as an empty log with no leader.
     */
    static ServerServiceDefinition definition(java.util.function.IntFunction<LeaderExitWatch> byShard) {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(LOG_END, ServerCalls.asyncUnaryCall((LogEndRequest request, StreamObserver<LogEnd> out) -> {
                    LeaderExitWatch watch = byShard.apply(request.getShard());
                    out.onNext(watch == null ? LogEnd.newBuilder().setTerm(-1).setIndex(-1)
                            .setLeaderSilentMs(Long.MAX_VALUE).build() : watch.logEnd());
                    out.onCompleted();
                }))
                .build();
    }

    private LogEnd logEnd() {
        RaftServer s = server.get();
        LogEnd.Builder end = LogEnd.newBuilder().setTerm(-1).setIndex(-1).setLeaderSilentMs(Long.MAX_VALUE);
        try {
            if (s == null) {
                return end.build();
            }
            RaftServer.Division division = s.getDivision(groupId);
            TermIndex last = division.getRaftLog().getLastEntryTermIndex();
            if (last != null) {
                end.setTerm(last.getTerm()).setIndex(last.getIndex());
            }
            DivisionInfo info = division.getInfo();
            RaftPeerId leader = info.getLeaderId();
            if (info.isLeader()) {
                end.setLeader(s.getId().toString()).setLeaderSilentMs(0);
            } else if (info.isFollower() && leader != null) {
                end.setLeader(leader.toString()).setLeaderSilentMs(GroupView.leaderContactMs(info));
            }
        } catch (IOException e) {
            // no division yet: an empty log, no leader
        }
        return end.build();
    }

    /**
     * The answers of followers that agree {@code leader} is silent: they follow no leader or that
     * one, and have not heard from it for at least 9/10 of {@code silenceMs} (heartbeats reach
     * followers a little apart). Null when these and this node are no majority of {@code voters}.
     */
    static Map<String, LogEnd> agreeingSilent(String me, List<String> voters, String leader, Map<String, LogEnd> ends,
                                              long silenceMs) {
        Map<String, LogEnd> agreeing = new HashMap<>();
        for (String peer : voters) {
            LogEnd end = ends.get(peer);
            if (peer.equals(leader) || end == null) {
                continue;
            }
            boolean followsNone = end.getLeader().isEmpty();
            if (peer.equals(me) || (followsNone || end.getLeader().equals(leader))
                    && end.getLeaderSilentMs() >= silenceMs * 9 / 10) {
                agreeing.put(peer, end);
            }
        }
        return agreeing.size() >= voters.size() / 2 + 1 && agreeing.containsKey(me) ? agreeing : null;
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
                    LogEndRequest.newBuilder().setRequester(nodeId).setShard(shard).build(), new StreamObserver<>() {
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
                LOG.debug("{}: {} did not tell its log end ({}): counting it as behind", nodeId, peer, e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return ends;
    }

    /** What a look does after probing the leader's port because a connection closed. */
    enum AfterProbe {
        /** Refused: the leader's process is gone; go on towards an election. */
        GONE,
        /** Still accepting right after the close: the process may be closing its sockets still; ask again soon. */
        ASK_AGAIN,
        /** Accepting (after the re-asks), or no answer: leave the leader alone (silence has its own check). */
        STOP
    }

    static AfterProbe afterProbe(TcpProbe probe, int round, int recheck) {
        if (probe == TcpProbe.REFUSED) {
            return AfterProbe.GONE;
        }
        return probe == TcpProbe.ACCEPTED && round == 0 && recheck < RECHECKS ? AfterProbe.ASK_AGAIN : AfterProbe.STOP;
    }

    /**
     * One look, on the watch thread: {@code round} 0 when a connection closed or the silence began,
     * then once per stagger; {@code recheck} counts the looks again at a port that still accepted.
     */
    private void look(int round, Cause cause, int recheck) {
        boolean again = false;
        try {
            again = lookOnce(round, cause, recheck);
        } catch (IOException | RuntimeException e) {
            LOG.debug("{}: leader exit check failed", nodeId, e);
        } finally {
            if (!again) {
                probing.set(false);
            }
        }
    }

    /** @return whether another look is scheduled */
    private boolean lookOnce(int round, Cause cause, int recheck) throws IOException {
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
        if (cause == Cause.CLOSED) {
            TcpProbe probe = address == null ? TcpProbe.NO_ANSWER : TcpProbe.connect(address, CONNECT_TIMEOUT_MS);
            AfterProbe next = afterProbe(probe, round, recheck);
            if (next == AfterProbe.ASK_AGAIN) {
                executor.schedule(() -> look(round, cause, recheck + 1), RECHECK_MS, TimeUnit.MILLISECONDS);
                return true;
            }
            if (next == AfterProbe.STOP) {
                LOG.debug("{}: a connection closed, but leader {}'s Raft port answers {}", nodeId, leader, probe);
                return false;
            }
        } else if (GroupView.leaderContactMs(info) < silenceMs) {
            return false; // heard from it again
        }
        List<String> voters = division.getRaftConf().getCurrentPeers().stream().map(RaftPeer::getId)
                .map(RaftPeerId::toString).toList();
        Map<String, LogEnd> ends = logEnds(voters, leader.toString());
        if (cause == Cause.SILENT) {
            ends = agreeingSilent(nodeId, voters, leader.toString(), ends, silenceMs);
            if (ends == null) {
                LOG.debug("{}: leader {} silent here, but no majority agrees: leaving it to Ratis", nodeId, leader);
                return false;
            }
        }
        int rank = rank(nodeId, voters, leader.toString(), ends);
        if (rank < 0) {
            return false; // not a voter
        }
        if (round < rank) {
            executor.schedule(() -> look(round + 1, cause, recheck), stagger.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        }
        TermIndex last = division.getRaftLog().getLastEntryTermIndex();
        long term = info.getCurrentTerm();
        String why = cause == Cause.CLOSED ? "leader " + leader + "'s Raft port " + address + " refuses connections"
                : "a majority has not heard from leader " + leader + " for " + silenceMs + " ms";
        if (last == null || last.getTerm() != term) {
            LOG.info("{}: {}, but this node's log lacks an entry of term {}: leaving the election to the timeout",
                    nodeId, why, term);
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
            (cause == Cause.CLOSED ? elections : silenceElections).incrementAndGet();
            LOG.info("{}: {}: started an election for term {} at once (last entry {})", nodeId, why, term + 1, last);
        } else {
            LOG.info("{}: {}, but Raft refused to start an election now; the timeout will", nodeId, why);
        }
        return false;
    }
}
