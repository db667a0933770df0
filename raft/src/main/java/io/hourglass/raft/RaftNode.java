package io.hourglass.raft;

import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.HourglassException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.UnavailableException;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.retry.ExceptionDependentRetry;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's membership in the Hourglass Raft group: the Ratis server with the
 * {@link HourglassStateMachine}, and a Ratis client through which this node proposes commands
 * ({@link Replicator}). A standalone node is a group of one; there is no other storage path.
 *
 * <p>Leadership reaches the listener only once this node leads <em>and</em> has applied every
 * entry committed before its term, so the dispatcher never works from a stale store.
 */
public final class RaftNode implements Replicator, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RaftNode.class);
    /** The group that orders every command; fixed, so restarted and new nodes find it. */
    public static final RaftGroupId GROUP_ID =
            RaftGroupId.valueOf(UUID.nameUUIDFromBytes("hourglass-events-0".getBytes(StandardCharsets.UTF_8)));

    /** Committed entries a follower may still have to apply and count as caught up. */
    static final long READY_MAX_LAG = 100;

    private final RaftConfig config;
    private final RaftPeerId selfId;
    private final RaftGroup group;
    private final RaftServer server;
    private final RaftClient client;
    private final HourglassStateMachine stateMachine;
    private final Consumer<Boolean> leadershipListener;
    private final ExecutorService leadershipExecutor;
    private final int maxEntryBytes;
    private final RaftProperties properties;
    private final io.hourglass.core.storage.EventStore store;
    private final CheckpointServer checkpointServer;
    private volatile boolean leaderReady;
    private final java.util.concurrent.atomic.AtomicLong leaderChanges = new java.util.concurrent.atomic.AtomicLong();
    private final FollowerWatch followerWatch;
    private final Proposer proposer;
    private final java.util.concurrent.ScheduledExecutorService watchExecutor;

    public RaftNode(RaftConfig config, String advertisedHost, int grpcPort, StateApplier applier, Clock clock,
                    int maxEntryBytes, Consumer<Boolean> leadershipListener) throws IOException {
        this.config = config;
        this.selfId = RaftPeerId.valueOf(config.nodeId());
        this.leadershipListener = leadershipListener;
        this.maxEntryBytes = maxEntryBytes;
        this.leadershipExecutor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "hourglass-leadership-" + config.nodeId());
            t.setDaemon(true);
            return t;
        });
        this.followerWatch = new FollowerWatch(config.nodeId(), config.followerStallTimeout());
        this.watchExecutor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hourglass-follower-watch-" + config.nodeId());
            t.setDaemon(true);
            return t;
        });
        List<RaftPeer> peers = config.voters(advertisedHost, grpcPort).stream()
                .map(p -> RaftPeer.newBuilder().setId(p.id()).setAddress(p.raftAddress()).build())
                .toList();
        this.group = RaftGroup.valueOf(GROUP_ID, peers);
        this.store = applier.store();
        CheckpointServer.deleteQuietly(config.checkpointDir()); // leftovers of an interrupted transfer
        this.checkpointServer = new CheckpointServer(config.nodeId(), store, config.checkpointDir(),
                config.maxCheckpointDownloads());
        CheckpointSource checkpoints = new CheckpointClient(config.nodeId(), config.checkpointDir(), this::raftAddressOf);
        this.stateMachine = new HourglassStateMachine(applier, clock, maxEntryBytes, this::onLeadership, checkpoints);
        RaftProperties props = properties(config, maxEntryBytes);
        this.properties = props;
        org.apache.ratis.conf.Parameters parameters = new org.apache.ratis.conf.Parameters();
        // The checkpoint download is served next to Ratis' own services on the Raft port, so it is
        // exactly as reachable, and as protected, as replication itself.
        GrpcConfigKeys.Server.setServicesCustomizer(parameters, (builder, types) ->
                types.contains(org.apache.ratis.grpc.server.GrpcServices.Type.SERVER)
                        ? builder.addService(checkpointServer.definition()) : builder);
        this.server = RaftServer.newBuilder()
                .setServerId(selfId)
                // A joining node creates no group: the cluster adds it (GroupManagementApi.add).
                .setGroup(config.join() ? null : group)
                .setProperties(props)
                .setParameters(parameters)
                .setStateMachine(stateMachine)
                .setOption(RaftStorage.StartupOption.RECOVER)
                .build();
        this.client = RaftClient.newBuilder()
                .setClientId(ClientId.randomId())
                .setRaftGroup(group)
                .setLeaderId(peers.size() == 1 ? selfId : null)
                .setProperties(props)
                .setRetryPolicy(retryPolicy(config))
                .build();
        this.proposer = new Proposer(server, client, selfId, maxEntryBytes, config.requestTimeout(), this::grpcAddressOf);
    }

    /**
     * Bounded and sleeping (Ratis' default retries forever without sleeping); a refusal by the
     * state machine is final, retrying it cannot help.
     */
    private static RetryPolicy retryPolicy(RaftConfig config) {
        RetryPolicy transientFailures = RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                Math.max(1, (int) (config.requestTimeout().toMillis() / 200)),
                TimeDuration.valueOf(200, TimeUnit.MILLISECONDS));
        return ExceptionDependentRetry.newBuilder()
                .setExceptionToPolicy(StateMachineException.class, RetryPolicies.noRetry())
                .setDefaultPolicy(transientFailures)
                .build();
    }

    private static RaftProperties properties(RaftConfig config, int maxEntryBytes) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(config.storageDir().toFile()));
        GrpcConfigKeys.Server.setPort(p, config.raftPort());
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(config.electionTimeoutMin().toMillis(), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(config.electionTimeoutMax().toMillis(), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.LeaderElection.setPreVote(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, config.snapshotEveryEntries());
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setPurgeGap(p, config.purgeGap());
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(config.logSegmentBytes()));
        // Followers too far behind fetch a store checkpoint from the leader (the DB is the snapshot).
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, false);
        SizeInBytes entryLimit = SizeInBytes.valueOf(Math.max(4 << 20, maxEntryBytes * 2L));
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, entryLimit);
        RaftServerConfigKeys.Log.setWriteBufferSize(p, SizeInBytes.valueOf(entryLimit.getSize() + (1 << 20)));
        GrpcConfigKeys.setMessageSizeMax(p, SizeInBytes.valueOf(entryLimit.getSize() + (2 << 20)));
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(config.requestTimeout().toMillis(), TimeUnit.MILLISECONDS));
        return p;
    }

    public void start() throws IOException {
        server.start();
        long every = Math.max(100, Math.min(1_000, config.followerStallTimeout().toMillis() / 4));
        watchExecutor.scheduleWithFixedDelay(this::watchFollowers, every, every, TimeUnit.MILLISECONDS);
        LOG.info("{}: raft server started on port {} in group {} with peers {}", config.nodeId(), config.raftPort(),
                GROUP_ID, group.getPeers());
    }

    /** One look at the followers' progress (the watch thread); a follower has nothing to watch. */
    private void watchFollowers() {
        try {
            Status s = status();
            if ("LEADER".equals(s.role())) {
                followerWatch.observe(s.followerMatchIndex(), s.commitIndex(), System.nanoTime());
            } else {
                followerWatch.reset();
            }
        } catch (RuntimeException e) {
            LOG.warn("{}: follower watch failed", config.nodeId(), e);
        }
    }

    /**
     * Followers that have stopped catching up (see {@link FollowerWatch}); empty unless this node
     * leads.
     */
    public java.util.Set<String> stalledFollowers() {
        return followerWatch.stalled();
    }

    /** Leadership events come on Ratis threads; handle them in order on our own thread. */
    private void onLeadership(boolean leads) {
        leaderChanges.incrementAndGet();
        if (leadershipExecutor.isShutdown()) {
            return; // closing: Ratis reports the step-down after we stopped listening
        }
        try {
            leadershipExecutor.execute(() -> handleLeadership(leads));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.debug("{}: leadership event after close ignored", config.nodeId());
        }
    }

    private void handleLeadership(boolean leads) {
        {
            if (!leads) {
                if (leaderReady) {
                    LOG.info("{}: lost leadership", config.nodeId());
                }
                leaderReady = false;
                leadershipListener.accept(false);
                return;
            }
            try {
                var division = server.getDivision(GROUP_ID);
                long committed = division.getRaftLog().getLastCommittedIndex();
                while (stateMachine.getLastAppliedTermIndex().getIndex() < committed) {
                    if (!division.getInfo().isLeader()) {
                        return;
                    }
                    TimeUnit.MILLISECONDS.sleep(5); // apply catches up within a few ms; no event exposes it
                }
                if (division.getInfo().isLeader()) {
                    leaderReady = true;
                    LOG.info("{}: leading at term {} from applied {}", config.nodeId(),
                            division.getInfo().getCurrentTerm(), stateMachine.getLastAppliedTermIndex());
                    leadershipListener.accept(true);
                }
            } catch (IOException e) {
                LOG.error("{}: cannot read the division after becoming leader", config.nodeId(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public boolean isLeader() {
        return leaderReady;
    }

    /** Proposes a command (see {@link Proposer}). */
    @Override
    public CompletableFuture<CommandReply> propose(Command command) {
        return proposer.propose(command, leaderReady);
    }

    @Override
    public String leaderHint() {
        try {
            RaftPeerId leader = server.getDivision(GROUP_ID).getInfo().getLeaderId();
            return leader == null ? null : grpcAddressOf(leader.toString());
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * A leader's lease: a majority (counting itself) answered within 90% of the minimum election
     * timeout. Each of them received an append after that answer's send time, which restarted its
     * election timer, so none can have started an election yet and no other leader can exist. The
     * 10% absorbs clock-rate differences.
     */
    @Override
    public boolean holdsLease() {
        if (!leaderReady) {
            return false;
        }
        try {
            var info = server.getDivision(GROUP_ID).getInfo();
            if (!info.isLeader()) {
                return false;
            }
            var followers = info.getRoleInfoProto().getLeaderInfo().getFollowerInfoList();
            long bound = config.electionTimeoutMin().toMillis() * 9 / 10;
            long fresh = followers.stream().filter(f -> f.getLastRpcElapsedTimeMs() < bound).count();
            return (fresh + 1) * 2 > followers.size() + 1;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Ready to serve (the readiness probe): part of a group with a known leader, and caught up —
     * a leader once it has applied everything before its term, a follower once it has applied
     * all but at most {@link #READY_MAX_LAG} of the entries it knows to be committed.
     */
    public boolean hasLeader() {
        try {
            var division = server.getDivision(GROUP_ID);
            var info = division.getInfo();
            if (info.isLeader()) {
                return leaderReady;
            }
            return info.getLeaderId() != null
                    && division.getRaftLog().getLastCommittedIndex() - info.getLastAppliedIndex() <= READY_MAX_LAG
                    && leaderContactMs(info) < config.followerStallTimeout().toMillis();
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * How long ago this follower last heard from its leader: a follower the leader stopped sending
     * to (a dead log appender, a partition) must not call itself ready on an old commit index.
     */
    private static long leaderContactMs(org.apache.ratis.server.DivisionInfo info) {
        var role = info.getRoleInfoProto();
        return role.hasFollowerInfo() && role.getFollowerInfo().hasLeaderInfo()
                ? role.getFollowerInfo().getLeaderInfo().getLastRpcElapsedTimeMs() : 0;
    }

    /**
     * Asks the group to make {@code peerId} the leader (Ratis' own transfer); returns when it leads
     * or fails after {@code timeout}.
     */
    public void transferLeadership(String peerId, java.time.Duration timeout) throws IOException {
        // Addressed to the current leader explicitly: the client's cached leader may be stale, and a
        // non-leader answers DIFFERENT_LEADER instead of passing the request on.
        RaftPeerId leader = server.getDivision(GROUP_ID).getInfo().getLeaderId();
        RaftClientReply reply = client.admin().transferLeadership(RaftPeerId.valueOf(peerId), leader, timeout.toMillis());
        if (!reply.isSuccess()) {
            throw new IOException("leadership transfer to " + peerId + " failed: " + reply.getException());
        }
    }

    /** Asks this node's state machine to take a snapshot now; returns its index. */
    public long snapshotNow(java.time.Duration timeout) throws IOException {
        RaftClientReply reply = client.getSnapshotManagementApi(selfId).create(timeout.toMillis());
        if (!reply.isSuccess()) {
            throw new IOException("snapshot failed: " + reply.getException());
        }
        return reply.getLogIndex();
    }

    /** Leadership events this node has seen (elections it won or lost, leaders it learned of). */
    public long leaderChanges() {
        return leaderChanges.get();
    }

    /** A point-in-time view of this node's Raft state, for status and metrics. */
    public record Status(String nodeId, String role, String leaderId, long term, long commitIndex, long appliedIndex,
                         java.util.Map<String, Long> followerMatchIndex, java.util.Map<String, Long> followerLastContactMs) {
    }

    public Status status() {
        try {
            var division = server.getDivision(GROUP_ID);
            var info = division.getInfo();
            java.util.Map<String, Long> match = new java.util.TreeMap<>();
            java.util.Map<String, Long> contact = new java.util.TreeMap<>();
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
            return new Status(config.nodeId(), info.getCurrentRole().name(), leader == null ? null : leader.toString(),
                    info.getCurrentTerm(), division.getRaftLog().getLastCommittedIndex(), info.getLastAppliedIndex(),
                    match, contact);
        } catch (IOException e) {
            return new Status(config.nodeId(), "UNKNOWN", null, -1, -1, -1, java.util.Map.of(), java.util.Map.of());
        }
    }

    /**
     * The client (gRPC) address of a peer, which Ratis does not know: from the replicated peer
     * registry (members added at run time), else from this node's configured peer list.
     */
    public String grpcAddressOf(String peerId) {
        return store.peerAddress(peerId).orElseGet(() -> config.peers().stream().filter(p -> p.id().equals(peerId))
                .map(RaftConfig.Peer::grpcAddress).findFirst().orElse(null));
    }

    /** A member's Raft {@code host:port} from the current configuration, or null if it is none. */
    private String raftAddressOf(String peerId) {
        try {
            return currentPeers().stream().filter(p -> p.getId().toString().equals(peerId))
                    .map(RaftPeer::getAddress).findFirst().orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    /** Checkpoint chunks this node has sent to followers (tests, metrics). */
    public long checkpointChunksSent() {
        return checkpointServer.chunksSent();
    }

    /** A voter: its id and Raft address. */
    public record Member(String id, String raftAddress) {
    }

    /** The voters of the current configuration. */
    public List<Member> members() throws IOException {
        return currentPeers().stream().map(p -> new Member(p.getId().toString(), p.getAddress())).toList();
    }

    private List<RaftPeer> currentPeers() throws IOException {
        return List.copyOf(server.getDivision(GROUP_ID).getRaftConf().getCurrentPeers());
    }

    /**
     * Adds a voter: creates the group on the new node (started empty with --join), then commits
     * the new configuration; Ratis lets the new node catch up before it counts for the quorum.
     *
     * @throws AlreadyExistsException when the id is already a member
     */
    public List<Member> addVoter(String id, String host, int raftPort) throws IOException {
        List<RaftPeer> peers = new java.util.ArrayList<>(currentPeers());
        if (peers.stream().anyMatch(p -> p.getId().toString().equals(id))) {
            throw new AlreadyExistsException(HourglassException.excerpt(id) + " is already a member of the cluster");
        }
        RaftPeer added = RaftPeer.newBuilder().setId(id).setAddress(host + ":" + raftPort).build();
        peers.add(added);
        try (RaftClient toNew = RaftClient.newBuilder().setProperties(properties)
                .setRaftGroup(RaftGroup.valueOf(GROUP_ID, added)).setClientId(ClientId.randomId())
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(5,
                        TimeDuration.valueOf(500, TimeUnit.MILLISECONDS))).build()) {
            RaftClientReply created = toNew.getGroupManagementApi(added.getId()).add(RaftGroup.valueOf(GROUP_ID, peers));
            if (!created.isSuccess()) {
                throw new IOException("node " + id + " at " + added.getAddress() + " refused the group: " + created.getException());
            }
        } catch (org.apache.ratis.protocol.exceptions.AlreadyExistsException e) {
            LOG.info("{}: {} already has the group", config.nodeId(), id);
        } catch (org.apache.ratis.protocol.exceptions.RaftRetryFailureException e) {
            // Not an internal fault: the new node is not (yet) listening. Clients may retry.
            throw new io.hourglass.core.UnavailableException("node " + id + " at " + added.getAddress()
                    + " did not answer; start it with --join first, then add it again", e);
        }
        return setVoters(peers);
    }

    /** Removes a voter that is not the leader (transfer leadership first); NotFoundException if it is none. */
    public List<Member> removeVoter(String id) throws IOException {
        List<RaftPeer> peers = new java.util.ArrayList<>(currentPeers());
        if (!peers.removeIf(p -> p.getId().toString().equals(id))) {
            throw new NotFoundException(HourglassException.excerpt(id) + " is not a member of the cluster");
        }
        return setVoters(peers);
    }

    private List<Member> setVoters(List<RaftPeer> peers) throws IOException {
        RaftClientReply reply = client.admin().setConfiguration(peers);
        if (!reply.isSuccess()) {
            throw new IOException("configuration change failed: " + reply.getException());
        }
        LOG.info("{}: voters are now {}", config.nodeId(), peers);
        return peers.stream().map(p -> new Member(p.getId().toString(), p.getAddress())).toList();
    }

    public String nodeId() {
        return config.nodeId();
    }

    public RaftServer server() {
        return server;
    }

    public HourglassStateMachine stateMachine() {
        return stateMachine;
    }

    @Override
    public void close() throws IOException {
        leaderReady = false;
        leadershipExecutor.shutdownNow();
        watchExecutor.shutdownNow();
        try {
            client.close();
        } finally {
            server.close();
        }
        LOG.info("{}: raft server closed", config.nodeId());
    }
}
