package io.hourglass.core.rooms;

import com.google.protobuf.ByteString;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.command.ApplyListener;
import io.hourglass.core.command.ApplyResult;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.loop.EventLoop;
import io.hourglass.core.config.LimitsConfig;
import io.hourglass.core.config.RoomsConfig;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.RoomCommand;
import io.hourglass.core.proto.RoomFenceCmd;
import io.hourglass.core.proto.RoomMessage;
import io.hourglass.core.proto.RoomNewMessage;
import io.hourglass.core.proto.RoomSendCmd;
import io.hourglass.core.storage.EventStore;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lock-step rooms on this node (ROOMS.md, DESIGN §6): the public face of the rooms engine.
 *
 * <p>Pending messages and room settings are replicated (send and configure are proposed through the
 * {@link Replicator}, and every replica applies them). Client sessions, memberships, the ready sets
 * and the gates live only on the leader, in a {@link RoomsLeader} built from the store when this
 * node starts leading ({@link #setLeading}) and dropped when it stops — every session is then
 * closed, and clients reconnect to the new leader and subscribe again.
 *
 * <p>Threading: one engine thread owns all leader-side state; every method here only queues an
 * event for it and returns a future completed on that thread. Sinks and observers are called on it.
 * {@link #start()} starts that thread; a test leaves it unstarted and drives it with
 * {@link #runQueued()} and {@link #tick()} under a manual clock.
 *
 * <p>Errors: a malformed request (room name, payload size, page, client timeout) throws
 * {@link io.hourglass.core.InvalidRequestException} at once; futures fail with
 * {@link NotLeaderException} (carrying the leader hint) when this node does not lead, with
 * {@link io.hourglass.core.UnavailableException} once the engine is closed, and, for replicated
 * operations, with whatever {@link Replicator#propose} fails with. Outcomes that are not errors
 * (unknown client, duplicate or stale ack, ...) are answered as enum values.
 */
public final class RoomEngine implements ApplyListener, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RoomEngine.class);

    private final RoomsConfig config;
    private final RoomRequests requests;
    private final RoomStore store;
    private final Replicator replicator;
    private final Clock clock;
    private final RoomCounters counters = new RoomCounters();
    private final List<RoomObserver> observers = new CopyOnWriteArrayList<>();
    private final EventLoop loop;
    private volatile boolean leading;
    /** Engine thread only: the leader role while this node leads, else null. */
    private RoomsLeader leader;
    /** Engine thread only: tickets of release proposals, unique for this engine's lifetime. */
    private long lastTicket;
    /** Loop only: the term of the last leadership started, and which of that term's leaderships it was. */
    private long reignTerm;
    private long incarnation;
    /** Pause before fencing again after a fence proposal failed while still leading. */
    private static final long FENCE_RETRY_MS = 100;

    public RoomEngine(RoomsConfig config, LimitsConfig limits, EventStore store, Replicator replicator, Clock clock) {
        this.config = config;
        this.requests = new RoomRequests(limits);
        this.store = new RoomStore(store);
        this.replicator = replicator;
        this.clock = clock;
        this.loop = new EventLoop("hourglass-rooms", clock, EventLoop.Mode.QUEUED);
        loop.every(config.housekeepingInterval().toMillis(), this::housekeeping);
    }

    /** Starts the engine thread, which also runs housekeeping every {@code rooms.housekeepingInterval}. */
    public void start() {
        loop.start();
    }

    /**
     * Leadership changed. Gaining it builds the leader state from the store (call it once this node
     * has applied everything committed, as Ratis' leader-ready notification does); losing it closes
     * every session.
     *
     * @param term the Raft term this node leads in: its release decisions apply only in entries of
     *             that term, never after being forwarded to a later leader (0: not fenced)
     */
    public void setLeading(boolean nowLeading, long term) {
        synchronized (this) {
            if (leading == nowLeading) {
                return;
            }
            leading = nowLeading;
        }
        loop.submit(nowLeading ? () -> becomeLeader(term) : () -> stepDown("this node is no longer the leader"));
    }

    public boolean isLeading() {
        return leading;
    }

    /** Follows the replicated state on the leader; cheap no-op on followers. Apply thread. */
    @Override
    public void onApplied(ApplyResult result) {
        if (!leading || result.changes().isEmpty()) {
            return;
        }
        long index = result.position().index();
        for (ApplyResult.Change c : result.changes()) {
            if (!(c instanceof RoomChange change)) {
                continue;
            }
            loop.submit(() -> {
                if (leader != null) {
                    leader.onApplied(change, index);
                }
            });
        }
    }

    public void addObserver(RoomObserver observer) {
        observers.add(Objects.requireNonNull(observer, "observer"));
    }

    /** Opens a session with the default heartbeat timeout ({@code rooms.clientTimeout}). */
    public CompletableFuture<ClientId> connect(RoomSink sink) {
        return connect(sink, config.clientTimeout());
    }

    /** Opens a session whose sync memberships are evicted after {@code clientTimeout} without a heartbeat (≥ 1s). */
    public CompletableFuture<ClientId> connect(RoomSink sink, Duration clientTimeout) {
        Objects.requireNonNull(sink, "sink");
        long timeoutMs = RoomRequests.clientTimeoutMs(clientTimeout);
        return onLeader(() -> leader.connect(sink, timeoutMs));
    }

    /** The client's stream ended: its subscriptions go at once (no ejection events), its id is retired. */
    public void disconnect(ClientId client) {
        loop.submit(() -> {
            if (leader != null) {
                leader.disconnect(client);
            }
        });
    }

    public CompletableFuture<SubscribeOutcome> subscribe(ClientId client, String room, SubscriptionMode mode) {
        return subscribe(client, room, mode, null, null);
    }

    /**
     * Subscribes without a session id, as an older client does; see
     * {@link #subscribe(ClientId, String, SubscriptionMode, String, SessionId)}.
     */
    public CompletableFuture<SubscribeOutcome> subscribe(ClientId client, String room, SubscriptionMode mode,
                                                         String heldMessageId) {
        return subscribe(client, room, mode, heldMessageId, null);
    }

    /**
     * Subscribes. A SYNC member joins ready, so it neither blocks the room nor receives the message in
     * flight — unless {@code heldMessageId} names that message (a client resubscribing after a
     * failover with a message it has not acked yet): then the room waits for its ack. Deliveries may
     * reach the sink before the future completes.
     *
     * @param session the client's own session id (nullable), the same across reconnects: a release
     *        records its holders' ids, and after a failover the room resumes as soon as all of them
     *        have resubscribed instead of waiting out the client timeout
     */
    public CompletableFuture<SubscribeOutcome> subscribe(ClientId client, String room, SubscriptionMode mode,
                                                         String heldMessageId, SessionId session) {
        requests.room(room);
        Objects.requireNonNull(mode, "mode");
        return onLeader(() -> leader.subscribe(client, room, mode, heldMessageId, session));
    }

    /** Leaves one room (others are untouched); the sink is told {@link EjectReason#UNSUBSCRIBED}. */
    public CompletableFuture<UnsubscribeOutcome> unsubscribe(ClientId client, String room) {
        requests.room(room);
        return onLeader(() -> leader.unsubscribe(client, room));
    }

    /**
     * Acknowledges the room's in-flight message, which also refreshes the member's last-seen time
     * there; any other id changes nothing (not even last-seen) and the outcome says why.
     */
    public CompletableFuture<AckOutcome> ack(ClientId client, String room, String messageId) {
        requests.room(room);
        return onLeader(() -> leader.ack(client, room, messageId));
    }

    /** Refreshes the last-seen time of all of the client's sync memberships. */
    public CompletableFuture<PingOutcome> ping(ClientId client) {
        return onLeader(() -> leader.ping(client));
    }

    /** Sends one message; completes with its id once committed. */
    public CompletableFuture<String> send(String room, int priority, ByteString payload, ClientId producer) {
        return send(room, priority, payload, producer, "");
    }

    /** Sends one message under an idempotency key: a retry with the same key answers the first id. */
    public CompletableFuture<String> send(String room, int priority, ByteString payload, ClientId producer,
                                          String producerId) {
        return send(room, List.of(new RoomSend(priority, payload, producerId)), producer).thenApply(ids -> ids.get(0));
    }

    /**
     * Appends messages to the room's pending queue as one replicated entry; completes with their ids,
     * in order, once committed. {@code producer} (nullable) is the sending client: the send counts as
     * its heartbeat and its id is stored with the messages.
     */
    public CompletableFuture<List<String>> send(String room, List<RoomSend> messages, ClientId producer) {
        requests.room(room);
        requests.sends(messages);
        if (!leading) {
            return CompletableFuture.failedFuture(replicator.notLeader());
        }
        RoomSendCmd.Builder send = RoomSendCmd.newBuilder();
        String from = producer == null ? "" : producer.toString();
        for (RoomSend m : messages) {
            send.addMessages(RoomNewMessage.newBuilder().setPriority(m.priority()).setPayload(m.payload())
                    .setProducer(from).setProducerId(m.producerId()));
        }
        if (producer != null) {
            loop.submit(() -> {
                if (leader != null) {
                    leader.heartbeat(producer);
                }
            });
        }
        Command command = Command.newBuilder().setRoom(RoomCommand.newBuilder().setRoom(room).setSend(send)).build();
        return replicator.propose(command).thenApply(reply -> reply.getPublishedKeysList().stream()
                .map(k -> RoomKey.fromBytes(k.toByteArray()).id()).toList());
    }

    /** Hands a message to every current subscriber at once, past the gate; never stored, never acked. */
    public CompletableFuture<OutOfBandReceipt> sendOutOfBand(String room, ByteString payload, ClientId producer) {
        requests.room(room);
        requests.payload(payload.size());
        return onLeader(() -> leader.sendOutOfBand(room, payload, producer));
    }

    /** Replaces a room's settings through replication; completes once committed. */
    public CompletableFuture<Void> configure(String room, RoomSettings settings) {
        requests.room(room);
        Objects.requireNonNull(settings, "settings");
        if (!leading) {
            return CompletableFuture.failedFuture(replicator.notLeader());
        }
        Command command = Command.newBuilder()
                .setRoom(RoomCommand.newBuilder().setRoom(room).setConfigure(settings.toCommand())).build();
        return replicator.propose(command).thenApply(reply -> null);
    }

    /** Pending messages in release order, excluding the in-flight one, from {@code offset}; at most {@code limit}. */
    public CompletableFuture<List<RoomMessage>> peek(String room, int offset, int limit) {
        requests.room(room);
        requests.page(offset, limit);
        return onLeader(() -> leader.queries().peek(room, offset, limit));
    }

    /** Backlog, members with last-seen and readiness, listeners and the in-flight id of one room. */
    public CompletableFuture<RoomSnapshot> state(String room) {
        requests.room(room);
        return onLeader(() -> leader.queries().state(room));
    }

    /** The rooms the leader knows, by name, from {@code offset}; at most {@code limit} (room list). */
    public CompletableFuture<List<RoomSnapshot>> list(int offset, int limit) {
        requests.page(offset, limit);
        return onLeader(() -> leader.queries().list(offset, limit));
    }

    /** How many rooms have a backlog, and the {@code topN} largest. */
    public CompletableFuture<RoomsOverview> metrics(int topN) {
        if (topN < 0 || topN > RoomRequests.MAX_PAGE) {
            // Named as the request and the CLI name it (top_n, --top), not as peek's offset and limit.
            throw new io.hourglass.core.InvalidRequestException("top_n (--top) must be between 0 and "
                    + RoomRequests.MAX_PAGE + ", got " + topN);
        }
        return onLeader(() -> leader.queries().overview(topN));
    }

    public RoomCounters counters() {
        return counters;
    }

    /** Queues a housekeeping pass (tests; a started engine runs one every {@code rooms.housekeepingInterval}). */
    public void tick() {
        loop.submit(this::housekeeping);
    }

    /** Runs queued events on the caller's thread until none is left (tests; refused once started). */
    public int runQueued() {
        return loop.runQueued();
    }

    /** Closes every session and stops the engine thread. */
    @Override
    public void close() {
        synchronized (this) {
            leading = false;
        }
        if (loop.isStarted()) {
            try {
                loop.call(() -> {
                    stepDown("the node is shutting down");
                    return null;
                }).get(5, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException e) {
                LOG.warn("rooms engine did not stop cleanly: {}", e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else {
            loop.submit(() -> stepDown("the node is shutting down"));
            loop.runQueued();
        }
        loop.close();
    }

    /**
     * Loop only. The first leadership of a term loads the rooms at once (the term already fences off
     * every earlier leader's releases); a later one of the same term — cut off and back in touch before
     * anyone else was elected — first appends a fence and loads once it is applied, so that its own
     * earlier releases still in the log cannot change the rooms it rebuilt (see {@link Reign}).
     */
    private void becomeLeader(long term) {
        if (leader != null) {
            leader.close("leadership restarted");
            leader = null;
        }
        incarnation = term == reignTerm ? incarnation + 1 : 1;
        reignTerm = term;
        Reign reign = term == 0 ? Reign.ANY : new Reign(term, incarnation);
        if (reign.incarnation() <= 1) {
            load(reign);
            return;
        }
        fenceThenLoad(reign);
    }

    private void fenceThenLoad(Reign reign) {
        Command fence = Command.newBuilder().setRoom(RoomCommand.newBuilder().setFence(RoomFenceCmd.newBuilder()
                .setLeaderTerm(reign.term()).setIncarnation(reign.incarnation()))).build();
        replicator.propose(fence).whenComplete((reply, error) -> loop.submit(() -> {
            if (!leading || reign.term() != reignTerm || reign.incarnation() != incarnation || leader != null) {
                return; // stepped down, or another leadership started meanwhile
            }
            if (error == null) {
                load(reign);
            } else {
                LOG.info("rooms: fencing off this node's earlier releases of term {} failed ({}); trying again",
                        reign.term(), error.toString());
                loop.at(clock.millis() + FENCE_RETRY_MS, () -> {
                    if (leading && reign.term() == reignTerm && reign.incarnation() == incarnation && leader == null) {
                        fenceThenLoad(reign);
                    }
                });
            }
        }));
    }

    private void load(Reign reign) {
        RoomsLeader[] self = new RoomsLeader[1];
        self[0] = RoomsLeader.load(store, replicator, clock, counters, observers, () -> ++lastTicket,
                event -> loop.submit(() -> {
                    if (leader == self[0]) {
                        event.run();
                    }
                }),
                config.clientTimeout().toMillis(), config.resubscribeGrace().toMillis(), reign);
        leader = self[0];
    }

    private void stepDown(String reason) {
        if (leader != null) {
            leader.close(reason);
            leader = null;
        }
    }

    private void housekeeping() {
        if (leader != null) {
            leader.housekeeping();
        }
    }

    private <T> CompletableFuture<T> onLeader(Callable<T> call) {
        if (!leading) {
            return CompletableFuture.failedFuture(replicator.notLeader());
        }
        return loop.call(() -> {
            if (leader == null) {
                throw replicator.notLeader();
            }
            return call.call();
        });
    }
}
