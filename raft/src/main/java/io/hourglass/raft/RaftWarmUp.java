package io.hourglass.raft;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs, once at start, the Raft code a node's first leadership needs, so that a failover does not
 * wait for the JVM to load it: three throwaway Ratis servers in this JVM, on ports of their own on
 * the node's Raft host, elect a leader, take writes from the Raft client and from the unordered requests a
 * {@link Forwarder} sends, hand leadership over, lose their leader and elect again; then they are
 * closed and their directory deleted.
 *
 * <p>Why: a follower has never run Ratis' leader side (election, leader state, log appenders, the
 * replies to forwarded requests). The first time it does, in a failover, the JVM loads some 400
 * classes and links as many lambda call sites, all interpreted: measured on a 2-core machine, that
 * made the first failover's election-to-ready step 130–200 ms, against 60–80 ms for a node that had
 * led before. The throwaway servers share this node's classes, not its state: another group id,
 * their own storage, their own ports, and a state machine that keeps nothing.
 *
 * <p>With peer TLS their ports take the node's peer certificates, mutual, like the Raft port (and
 * the node's own host, which its certificate names, so that the handshake checks out); they listen
 * for a few seconds. A warm-up that fails or overruns its budget is
 * logged and abandoned: it never affects the node.
 */
final class RaftWarmUp implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RaftWarmUp.class);
    static final String DIR_PREFIX = "warmup-";
    /** The throwaway servers' ids: what Ratis logs about them carries it (the server's log filter drops those lines). */
    static final String MEMBER_PREFIX = RaftNode.WARM_UP_MEMBER_PREFIX;
    private static final int WRITES = 200;
    /** Below this much usable space on the data dir's file system the warm-up is skipped: the node's own log comes first. */
    static final long MIN_FREE_BYTES = 512L << 20;

    private final String nodeId;
    private final Path parent;
    private final String host;
    private final CompletableFuture<Boolean> done = new CompletableFuture<>();
    private final Parameters tlsParameters;
    private final Duration budget;
    private final long minFreeBytes;
    private final AtomicBoolean stop = new AtomicBoolean();
    private Thread thread;
    /** Only the warm-up's own thread sends. */
    private long callIds = 1;

    /**
     * @param parent where the throwaway servers' directory is made (and leftovers of an interrupted
     *               warm-up are removed)
     * @param host   where the servers listen: the node's own Raft host, which its peer certificate names
     * @param tls    the node's peer TLS, or null for plain text
     */
    RaftWarmUp(String nodeId, Path parent, String host, GrpcTlsConfig tls, Duration budget) {
        this(nodeId, parent, host, tls, budget, MIN_FREE_BYTES);
    }

    /** @param minFreeBytes below this much usable space on {@code parent}'s disk the warm-up is skipped */
    RaftWarmUp(String nodeId, Path parent, String host, GrpcTlsConfig tls, Duration budget, long minFreeBytes) {
        this.minFreeBytes = minFreeBytes;
        this.nodeId = nodeId;
        this.parent = parent;
        this.host = host;
        this.tlsParameters = new Parameters();
        if (tls != null) {
            GrpcConfigKeys.TLS.setConf(tlsParameters, tls);
        }
        this.budget = budget;
    }

    /** Runs the warm-up on a daemon thread of its own; completes with {@link #run}'s outcome. */
    synchronized CompletableFuture<Boolean> start() {
        thread = new Thread(() -> done.complete(run()), "hourglass-warmup-" + nodeId);
        thread.setDaemon(true);
        thread.start();
        return done;
    }

    /** Stops a running warm-up at its next step and waits (a few seconds at most) for its servers to close. */
    @Override
    public void close() {
        stop.set(true);
        Thread t;
        synchronized (this) {
            t = thread;
        }
        if (t != null) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Removes the directories of warm-ups a crash interrupted. */
    static void deleteLeftovers(Path parent) {
        if (!Files.isDirectory(parent)) {
            return;
        }
        try (Stream<Path> s = Files.list(parent)) {
            s.filter(p -> p.getFileName().toString().startsWith(DIR_PREFIX)).forEach(CheckpointServer::deleteQuietly);
        } catch (IOException e) {
            LOG.debug("listing {}: {}", parent, e.toString());
        }
    }

    /**
     * Runs the warm-up; returns whether every step ran. Never throws. Skipped when the data dir's
     * disk has less than {@link #MIN_FREE_BYTES} usable.
     */
    boolean run() {
        long start = System.nanoTime();
        long deadline = start + budget.toNanos();
        deleteLeftovers(parent);
        try {
            long free = Files.getFileStore(parent).getUsableSpace();
            if (free < minFreeBytes) {
                LOG.info("{}: Raft warm-up skipped: {} MB usable on the data dir's disk, under {} MB", nodeId,
                        free >> 20, minFreeBytes >> 20);
                return false;
            }
        } catch (IOException e) {
            LOG.debug("{}: reading the free space of {}: {}", nodeId, parent, e.toString());
        }
        Path dir = null;
        List<RaftServer> servers = new ArrayList<>();
        try {
            Files.createDirectories(parent);
            dir = Files.createTempDirectory(parent, DIR_PREFIX);
            // Each server binds a port of the kernel's choosing and starts without a group; the group,
            // naming the ports they got, is added to each of them next. Ports picked free beforehand
            // could be taken by another socket before the server bound them, and a Ratis server
            // that fails to bind exits the whole process (seen in CI: the node died at start).
            for (int i = 1; i <= 3; i++) {
                RaftPeerId id = RaftPeerId.valueOf(MEMBER_PREFIX + i);
                servers.add(RaftServer.newBuilder().setServerId(id).setProperties(properties(dir.resolve(id.toString()), true))
                        .setParameters(tlsParameters).setStateMachine(new Discard()).build());
            }
            List<RaftPeer> peers = new ArrayList<>();
            for (RaftServer s : servers) {
                s.start();
                peers.add(RaftPeer.newBuilder().setId(s.getId())
                        .setAddress(host + ":" + s.getServerRpc().getInetSocketAddress().getPort()).build());
            }
            RaftGroup group = RaftGroup.valueOf(RaftGroupId.valueOf(UUID.randomUUID()), peers);
            for (RaftServer s : servers) {
                RaftClientReply added = s.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), s.getId(),
                        callIds++, group, true));
                if (!added.isSuccess()) {
                    throw new IOException("adding the warm-up group to " + s.getId() + " failed: " + added.getException());
                }
            }
            RaftPeerId leader = leaderOf(servers, group.getGroupId(), deadline);
            writes(dir, group, leader, deadline);
            try (RaftClient admin = client(dir, group, leader)) {
                admin.admin().transferLeadership(other(peers, leader), leader, remainingMs(deadline));
            }
            leader = leaderOf(servers, group.getGroupId(), deadline);
            writes(dir, group, leader, deadline);
            // The leader goes away: the two left elect one of them (votes with a peer refusing).
            RaftServer gone = serverOf(servers, leader);
            gone.close();
            servers.remove(gone);
            leader = leaderOf(servers, group.getGroupId(), deadline);
            writes(dir, group, leader, deadline);
            LOG.info("{}: warmed up the Raft leader's code in {} ms", nodeId,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            return true;
        } catch (Exception e) {
            if (stop.get()) {
                LOG.debug("{}: Raft warm-up stopped: {}", nodeId, e.toString());
            } else {
                LOG.info("{}: Raft warm-up abandoned after {} ms ({}); the first leadership of this process may "
                        + "take longer", nodeId, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), e.toString());
            }
            return false;
        } finally {
            for (RaftServer s : servers) {
                try {
                    s.close();
                } catch (IOException | RuntimeException e) {
                    LOG.debug("closing a warm-up server: {}", e.toString());
                }
            }
            if (dir != null) {
                CheckpointServer.deleteQuietly(dir);
            }
        }
    }

    /** @param server a server's (it listens on a port of the kernel's choosing), or a client's */
    private RaftProperties properties(Path storage, boolean server) {
        RaftProperties p = new RaftProperties();
        RaftServerConfigKeys.setStorageDir(p, List.of(storage.toFile()));
        if (server) {
            GrpcConfigKeys.Server.setPort(p, 0);
            GrpcConfigKeys.Server.setHost(p, host);
        }
        // Short timeouts: the code is the same, the waits are not worth having here.
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(150, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(300, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.LeaderElection.setPreVote(p, true);
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(p, false);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, false);
        // A few hundred small entries: small segments and buffers, little preallocated on disk.
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(1 << 20));
        RaftServerConfigKeys.Log.setPreallocatedSize(p, SizeInBytes.valueOf(64 << 10));
        RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, SizeInBytes.valueOf(64 << 10));
        RaftServerConfigKeys.Log.setWriteBufferSize(p, SizeInBytes.valueOf(128 << 10));
        RaftConfigKeys.Rpc.setType(p, new InstallNudgingAppender.Rpc());
        return p;
    }

    /**
     * Writes as a {@link Forwarder} sends them (unordered requests, each with its own call id) to the
     * leader, and one to each other server, which answers "not leader" (a closed one does not answer).
     */
    private void writes(Path dir, RaftGroup group, RaftPeerId leader, long deadline) throws Exception {
        // A client of its own each time: a "not leader" answer closes Ratis' unordered stream to that server.
        try (RaftClient client = client(dir, group, leader)) {
            Message m = Message.valueOf("warm-up ".repeat(64));
            List<CompletableFuture<RaftClientReply>> sent = new ArrayList<>();
            for (int i = 0; i < WRITES; i++) {
                sent.add(send(client, group, leader, m));
            }
            waitAll(sent, deadline);
            sent.clear();
            for (RaftPeer peer : group.getPeers()) {
                if (!peer.getId().equals(leader)) {
                    sent.add(send(client, group, peer.getId(), m).exceptionally(e -> null));
                }
            }
            waitAll(sent, deadline);
        }
        check(deadline);
    }

    private RaftClient client(Path dir, RaftGroup group, RaftPeerId leader) {
        return RaftClient.newBuilder().setClientId(ClientId.randomId()).setRaftGroup(group).setLeaderId(leader)
                .setProperties(properties(dir.resolve("client"), false)).setParameters(tlsParameters)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(100,
                        TimeDuration.valueOf(20, TimeUnit.MILLISECONDS)))
                .build();
    }

    private CompletableFuture<RaftClientReply> send(RaftClient client, RaftGroup group, RaftPeerId to, Message m) {
        RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(client.getId()).setServerId(to)
                .setGroupId(group.getGroupId()).setCallId(callIds++).setMessage(m)
                .setType(RaftClientRequest.writeRequestType()).build();
        return client.getClientRpc().sendRequestAsyncUnordered(request);
    }

    private void waitAll(List<CompletableFuture<RaftClientReply>> sent, long deadline) throws Exception {
        CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(remainingMs(deadline), TimeUnit.MILLISECONDS);
    }

    private RaftPeerId leaderOf(List<RaftServer> servers, RaftGroupId group, long deadline) throws Exception {
        while (true) {
            check(deadline);
            for (RaftServer s : servers) {
                if (s.getDivision(group).getInfo().isLeaderReady()) {
                    return s.getId();
                }
            }
            // The election takes one or two timeouts of 150-300 ms; polling is what Ratis' own tests do.
            Thread.sleep(10);
        }
    }

    private void check(long deadline) throws IOException {
        if (stop.get()) {
            throw new IOException("stopped");
        }
        if (System.nanoTime() > deadline) {
            throw new IOException("over its budget of " + budget.toMillis() + " ms");
        }
    }

    private long remainingMs(long deadline) {
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }

    private static RaftServer serverOf(List<RaftServer> servers, RaftPeerId id) {
        return servers.stream().filter(s -> s.getId().equals(id)).findFirst().orElseThrow();
    }

    private static RaftPeerId other(List<RaftPeer> peers, RaftPeerId not) {
        return peers.stream().map(RaftPeer::getId).filter(id -> !id.equals(not)).findFirst().orElseThrow();
    }

    /** Applies every entry by forgetting it. */
    private static final class Discard extends BaseStateMachine {
        @Override
        public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
            LogEntryProto entry = trx.getLogEntry();
            updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
            return CompletableFuture.completedFuture(Message.EMPTY);
        }
    }
}
