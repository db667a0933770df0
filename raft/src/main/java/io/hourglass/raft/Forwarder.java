package io.hourglass.raft;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.ResourceUnavailableException;
import org.apache.ratis.protocol.exceptions.TimeoutIOException;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends the proposals of a node that does not lead to the leader its own Raft division knows of,
 * one unordered write request each, and sends a proposal again as soon as that knowledge changes.
 *
 * <p>Why not the Ratis client's ordered stream: when the leader is cut off its connection hangs
 * rather than breaks, and the client waits out its whole request timeout before guessing a random
 * peer, whose answer may point back at the old leader. This node's division, though, learns the
 * new leader from its first append. So an attempt is given up when the division names another
 * leader (at once, checked every {@link #tickMs}), or after {@code attemptTimeout} without an
 * answer (its connection is then dropped and made anew), and the proposal goes to the leader the
 * division names, or into the division itself once this node leads. Every attempt of a proposal
 * carries the same client and call id, so a leader that already has it answers from its retry
 * cache, and publishes are deduplicated by producer id besides; a success from any attempt,
 * abandoned ones included, completes the proposal. Unordered also means concurrent proposals do not
 * wait for each other, as the leader's own ones do not ({@link Proposer}).
 *
 * <p>Thread-safe: a proposal's attempts run on Ratis' and gRPC's threads and on the ticker, and
 * each {@link Forward} guards its own state with its monitor.
 */
final class Forwarder implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Forwarder.class);
    /** First pause before sending again to the same server; doubled up to {@link #MAX_SLEEP_MS}. */
    private static final long FIRST_SLEEP_MS = RatisSettings.RETRY_FIRST_SLEEP_MS;
    private static final long MAX_SLEEP_MS = 200;

    private final RaftClientRpc rpc;
    private final RaftPeerId selfId;
    private final Supplier<RaftPeerId> knownLeader;
    private final Supplier<Collection<RaftPeer>> peers;
    private final Function<RaftClientRequest, CompletableFuture<RaftClientReply>> ownDivision;
    private final long attemptMs;
    private final long deadlineMs;
    private final long tickMs;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final Set<RaftPeerId> rpcKnows = ConcurrentHashMap.newKeySet();
    private final Set<Forward> pending = ConcurrentHashMap.newKeySet();
    /** Per server that answered "leader not ready": the proposals parked until it is ready. */
    private final Map<RaftPeerId, NotReady> notReady = new ConcurrentHashMap<>();
    /** System.nanoTime() of the last connection reset, per server. */
    private final Map<RaftPeerId, Long> lastReset = new ConcurrentHashMap<>();
    private final ScheduledExecutorService ticker;
    /** Attempts given up: another leader was known; no answer came within the attempt timeout. */
    private final AtomicLong retargeted = new AtomicLong();
    private final AtomicLong unanswered = new AtomicLong();
    /**
     * Drop connections, one lane per server: a graceful gRPC channel shutdown blocks up to 3 s when
     * the server is silent (a paused leader), so never on the ticker — and never ahead of another
     * server's reset. With one lane for all, the new leader's connection, closed by Ratis on its
     * "not ready yet" answer, waited behind the paused leader's shutdown: every attempt to the new
     * leader failed at once with "closed" for those 3 s (publishes held for a whole 4 s pause).
     * A lane's thread ends after {@link #LANE_IDLE_SECONDS} idle, so the servers of past
     * configurations (removed members) keep no thread, only a map entry each.
     */
    private static final long LANE_IDLE_SECONDS = 30;
    private final Map<RaftPeerId, ExecutorService> resetLanes = new ConcurrentHashMap<>();
    private final String nodeId;
    private volatile boolean closed;

    /** The group whose leader gets the proposals. */
    private final org.apache.ratis.protocol.RaftGroupId groupId;

    /**
     * @param knownLeader the leader this node's division knows of, or null
     * @param peers the group's peers, added to {@code rpc} before one of them is first asked
     * @param ownDivision submits a request into this node's own division (used once it leads)
     * @param attemptTimeout how long one attempt may go unanswered
     * @param deadline how long a proposal is tried in all ({@code raft.requestTimeout})
     */
    Forwarder(String nodeId, RaftClientRpc rpc, org.apache.ratis.protocol.RaftGroupId groupId, RaftPeerId selfId,
              Supplier<RaftPeerId> knownLeader,
              Supplier<Collection<RaftPeer>> peers,
              Function<RaftClientRequest, CompletableFuture<RaftClientReply>> ownDivision,
              Duration attemptTimeout, Duration deadline) {
        this.rpc = rpc;
        this.groupId = groupId;
        this.selfId = selfId;
        this.knownLeader = knownLeader;
        this.peers = peers;
        this.ownDivision = ownDivision;
        this.attemptMs = attemptTimeout.toMillis();
        this.deadlineMs = deadline.toMillis();
        this.tickMs = Math.max(10, Math.min(50, attemptMs / 10));
        this.ticker = Daemons.scheduler(nodeId + "-forwarder");
        this.nodeId = nodeId;
        ticker.scheduleWithFixedDelay(this::tick, tickMs, tickMs, TimeUnit.MILLISECONDS);
    }

    /** Completes with the leader's reply, or exceptionally after {@code deadline} or a failure no leader can mend. */
    CompletableFuture<RaftClientReply> forward(Message message) {
        Forward f = new Forward(message, callIds.incrementAndGet(), System.nanoTime());
        pending.add(f);
        f.result.whenComplete((r, e) -> pending.remove(f));
        f.send(knownLeader.get());
        return f.result;
    }

    /**
     * This node's division names a new leader (or none), or this node became a ready leader: look at
     * every proposal now, not at the next tick.
     */
    void leaderChanged() {
        try {
            ticker.execute(() -> {
                notReady.keySet().forEach(this::release);
                tick();
            });
        } catch (RejectedExecutionException closed) {
            // closing
        }
    }

    /** Attempts given up because the division named another leader. */
    /** Proposals forwarded to another node since start (one per proposal, however many attempts). */
    long forwarded() {
        return callIds.get();
    }

    long retargeted() {
        return retargeted.get();
    }

    /** Attempts given up because no answer came within the attempt timeout. */
    long unanswered() {
        return unanswered.get();
    }

    private void tick() {
        long now = System.nanoTime();
        notReady.forEach((server, gate) -> {
            if (TimeUnit.NANOSECONDS.toMillis(now - gate.sinceNanos) >= MAX_SLEEP_MS) {
                release(server); // the one asking again may have been given up: let the others ask
            }
        });
        RaftPeerId leader = knownLeader.get();
        for (Forward f : pending) {
            f.check(now, leader);
        }
    }

    @Override
    public void close() {
        ticker.shutdownNow();
        closed = true;
        resetLanes.values().forEach(ExecutorService::shutdownNow);
        for (Forward f : pending) {
            f.result.completeExceptionally(new IOException("the forwarder of " + selfId + " is closed"));
        }
    }

    /**
     * Drops the connection to {@code server}, so that the next attempt to it opens a new one; at most
     * once per tick per server, however many proposals failed on it: hundreds of them failing at once
     * on a leader that died would otherwise make a connection each.
     */
    private void reset(RaftPeerId server, Throwable cause) {
        long now = System.nanoTime();
        Long last = lastReset.get(server);
        if (last != null && TimeUnit.NANOSECONDS.toMillis(now - last) < tickMs
                || !(last == null ? lastReset.putIfAbsent(server, now) == null : lastReset.replace(server, last, now))) {
            return;
        }
        if (closed) {
            return; // closing: the connections go with the client
        }
        ExecutorService lane = resetLanes.computeIfAbsent(server,
                s -> Daemons.lane(nodeId + "-forwarder-reset-" + s, LANE_IDLE_SECONDS));
        if (closed) {
            lane.shutdownNow(); // close ran meanwhile and may have missed this lane
            return;
        }
        try {
            lane.execute(() -> rpc.handleException(server, cause, true));
        } catch (RejectedExecutionException e) {
            // closing: the connections go with the client
        }
    }

    private RaftClientRequest request(Forward f, RaftPeerId target) {
        return RaftClientRequest.newBuilder()
                .setClientId(clientId)
                .setServerId(target)
                .setGroupId(groupId)
                .setCallId(f.callId)
                .setMessage(f.message)
                .setType(RaftClientRequest.writeRequestType())
                .build();
    }

    private CompletableFuture<RaftClientReply> attempt(Forward f, RaftPeerId target) {
        RaftClientRequest request = request(f, target);
        if (target.equals(selfId)) {
            return ownDivision.apply(request);
        }
        if (rpcKnows.add(target)) {
            rpc.addRaftPeers(peers.get());
        }
        return rpc.sendRequestAsyncUnordered(request);
    }

    /**
     * Whether {@code e} is a leader's refusal while it hands its leadership over: nothing was logged,
     * so the proposal may go again at once.
     */
    static boolean stepsDown(Throwable e) {
        return e instanceof LeaderSteppingDownException || e instanceof TransferLeadershipException;
    }

    /**
     * Whether {@code e} is a refusal that passes with the leadership: this server does not lead, is
     * not ready to yet, or is handing its leadership over. Nothing was logged; asking again (here or
     * at the leader) is safe.
     */
    static boolean leadershipRefusal(Throwable e) {
        return e instanceof NotLeaderException || e instanceof LeaderNotReadyException || stepsDown(e);
    }

    /** {@code server} answered something other than "not ready": the proposals parked on it go now. */
    private void release(RaftPeerId server) {
        NotReady gate = notReady.remove(server);
        if (gate != null) {
            List<Runnable> go;
            synchronized (gate) {
                go = List.copyOf(gate.parked);
                gate.parked.clear();
            }
            go.forEach(Runnable::run);
        }
    }

    /**
     * A leader that is elected but not ready (its first entry not committed yet) turns every proposal
     * away. Asking again every few milliseconds with each of hundreds of proposals would take the CPU
     * that leader needs to get ready, so one proposal (the prober) asks again and the rest wait here
     * until it gets another answer, this node's leader changes, or {@link #MAX_SLEEP_MS} passes.
     */
    private static final class NotReady {
        final long sinceNanos = System.nanoTime();
        Forward prober;
        final List<Runnable> parked = new ArrayList<>();
    }

    /** One proposal and its current attempt. */
    private final class Forward {
        final Message message;
        final long callId;
        final long startNanos;
        final CompletableFuture<RaftClientReply> result = new CompletableFuture<>();
        /** Guarded by this: the server of the live attempt (null between attempts), its number and start. */
        private RaftPeerId target;
        private int attempt;
        private long attemptStartNanos;
        private long sleepMs = FIRST_SLEEP_MS;
        /** Guarded by this: the server last tried, and the pause before the next attempt, if one is under way. */
        private RaftPeerId lastTried;
        private int pause;
        private boolean pausing;

        Forward(Message message, long callId, long startNanos) {
            this.message = message;
            this.callId = callId;
            this.startNanos = startNanos;
        }

        /** Starts the next attempt to {@code to}, or waits for a leader to be known. */
        void send(RaftPeerId to) {
            int number;
            synchronized (this) {
                if (result.isDone()) {
                    return;
                }
                if (TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos) >= deadlineMs) {
                    result.completeExceptionally(new TimeoutException("not committed within " + deadlineMs + " ms"));
                    return;
                }
                if (to == null) {
                    target = null;
                    later(null);
                    return;
                }
                if (!to.equals(lastTried)) {
                    sleepMs = FIRST_SLEEP_MS; // a new server: its own failures set the pause
                }
                target = to;
                lastTried = to;
                pausing = false;
                number = ++attempt;
                attemptStartNanos = System.nanoTime();
            }
            LOG.debug("{}: proposal {} attempt {} to {}", selfId, callId, number, to);
            CompletableFuture<RaftClientReply> sent;
            try {
                sent = attempt(this, to);
            } catch (RuntimeException e) {
                sent = CompletableFuture.failedFuture(e);
            }
            sent.whenComplete((reply, error) -> answered(number, to, reply, error));
        }

        private void answered(int number, RaftPeerId to, RaftClientReply reply, Throwable error) {
            LOG.debug("{}: proposal {} attempt {} to {} answered: {}", selfId, callId, number, to,
                    reply != null && reply.isSuccess() ? "ok" : String.valueOf(error != null ? error
                            : reply == null ? null : reply.getException()));
            boolean turnedAway = reply != null && reply.getException() instanceof LeaderNotReadyException
                    || error != null && (error instanceof LeaderNotReadyException
                    || error.getCause() instanceof LeaderNotReadyException);
            if (!turnedAway) {
                release(to);
            }
            if (reply != null && reply.isSuccess()) {
                result.complete(reply); // from any attempt: the proposal is committed
                return;
            }
            synchronized (this) {
                if (number != attempt || target == null) {
                    return; // given up already, and sent again
                }
                target = null;
            }
            Throwable e = error instanceof CompletionException && error.getCause() != null
                    ? error.getCause() : error;
            if (reply != null) {
                e = reply.getException();
            }
            if (!to.equals(selfId) && (e instanceof NotLeaderException || e instanceof LeaderNotReadyException)) {
                // Ratis closes its whole unordered stream to a server on either answer (and fails every
                // request on it with it): the next attempt to that server needs a new connection.
                reset(to, e);
            }
            if (e instanceof NotLeaderException nle) {
                if (nle.getPeers() != null && !nle.getPeers().isEmpty()) {
                    rpc.addRaftPeers(nle.getPeers());
                }
                RaftPeerId hint = nle.getSuggestedLeader() == null ? null : nle.getSuggestedLeader().getId();
                RaftPeerId known = knownLeader.get();
                RaftPeerId next = known != null && !known.equals(to) ? known : hint;
                if (next != null && !next.equals(to)) {
                    send(next);
                } else {
                    later(null);
                }
            } else if (e instanceof LeaderNotReadyException) {
                // A new leader commits its first entry within a round trip or two: ask again soon, not
                // later and later, but only one proposal at a time (NotReady).
                synchronized (this) {
                    sleepMs = FIRST_SLEEP_MS;
                }
                NotReady gate = notReady.computeIfAbsent(to, k -> new NotReady());
                boolean probe;
                synchronized (gate) {
                    probe = gate.prober == null || gate.prober == this || gate.prober.result.isDone();
                    if (probe) {
                        gate.prober = this;
                    } else {
                        gate.parked.add(resumption(to));
                    }
                }
                if (probe) {
                    later(to);
                }
            } else if (stepsDown(e)) {
                // A leader handing over (SIGTERM, an admin transfer) refuses before it logs anything;
                // its successor is elected within a round trip or two: ask again soon, wherever the
                // leader is then (a new leader cuts the pause short).
                synchronized (this) {
                    sleepMs = FIRST_SLEEP_MS;
                }
                later(null);
            } else if (e instanceof ResourceUnavailableException) {
                later(to);
            } else if (reply == null && e instanceof AlreadyClosedException) {
                // The stream was closed under it (an answer above, or a reset): nothing reached the
                // server, so nothing says it is slow. Send again soon on a new connection, without the
                // pause doubling: doubling added up to 150-300 ms after each failover and transfer.
                reset(to, e);
                synchronized (this) {
                    sleepMs = FIRST_SLEEP_MS;
                }
                later(null);
            } else if (reply != null) {
                result.complete(reply); // refused by the state machine, or another answer no retry mends
            } else {
                reset(to, e);
                later(null);
            }
        }

        /** Sends again after a pause that doubles each time: to {@code to}, or to whichever leader is known then. */
        private void later(RaftPeerId to) {
            long sleep;
            synchronized (this) {
                sleep = sleepMs;
                sleepMs = Math.min(MAX_SLEEP_MS, sleepMs * 2);
            }
            try {
                ticker.schedule(resumption(to), sleep, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException closed) {
                result.completeExceptionally(new IOException("the forwarder of " + selfId + " is closed"));
            }
        }

        /** Starts a pause; what it returns sends again, unless the pause was cut short meanwhile (see check). */
        private Runnable resumption(RaftPeerId to) {
            int number;
            synchronized (this) {
                pausing = true;
                number = ++pause;
            }
            return () -> {
                synchronized (this) {
                    if (!pausing || pause != number) {
                        return;
                    }
                }
                send(to != null ? to : knownLeader.get());
            };
        }

        /**
         * Gives the live attempt up when another leader is known, or when it has gone unanswered too
         * long; cuts a pause short when a leader other than the one that failed is known.
         */
        void check(long nowNanos, RaftPeerId leader) {
            RaftPeerId abandoned;
            boolean moved;
            synchronized (this) {
                if (result.isDone()) {
                    return;
                }
                if (target == null) {
                    if (!pausing || leader == null || leader.equals(lastTried)) {
                        return;
                    }
                    pausing = false; // a leader other than the one that failed is known: no need to wait
                    abandoned = null;
                    moved = true;
                } else {
                    boolean silent = TimeUnit.NANOSECONDS.toMillis(nowNanos - attemptStartNanos) >= attemptMs;
                    moved = leader != null && !leader.equals(target);
                    if (!silent && !moved) {
                        return;
                    }
                    abandoned = target;
                    target = null;
                }
            }
            LOG.debug("{}: proposal {} check: leader {}, abandoned {}, moved {}", selfId, callId, leader, abandoned,
                    moved);
            if (moved) {
                if (abandoned != null) {
                    retargeted.incrementAndGet();
                }
                send(leader); // the old attempt may still succeed, and would complete the proposal then
            } else {
                // Unanswered: a new connection, and a short pause so that the next attempt uses it.
                unanswered.incrementAndGet();
                reset(abandoned, new TimeoutIOException("no answer within " + attemptMs + " ms"));
                later(null);
            }
        }
    }
}
