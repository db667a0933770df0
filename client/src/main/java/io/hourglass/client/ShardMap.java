package io.hourglass.client;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.ShardLeader;
import io.hourglass.api.v1.ShardsRequest;
import io.hourglass.api.v1.ShardsResponse;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this client knows of the cluster's event shards: how many, and which server leads each
 * ({@code Broker/Shards}). A publish whose messages all belong to one shard goes straight to that
 * shard's leader, so a steady client takes no forwarding hop; anything else (an unknown leader, a
 * batch across shards, a cluster of one shard, a server too old to answer) goes to the pool's
 * current server, which forwards as before.
 *
 * <p>Learned in the background: asked at the first publish, again when older than
 * {@link #REFRESH_NANOS} or after a routed attempt failed; never on the caller's thread.
 * Thread-safe: the map is one immutable snapshot in a volatile field.
 */
final class ShardMap {
    private static final Logger LOG = LoggerFactory.getLogger(ShardMap.class);
    /** How old a map may grow before a publish asks for a new one. */
    static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final long ASK_DEADLINE_MS = 2_000;

    /** One answer: the shard count and each shard's leader address (null: unknown). */
    record Snapshot(int count, String[] leaders, long fetchedNanos) {
        /** The leader's address for every message of {@code request}, or null when they differ or it is unknown. */
        String leaderFor(PublishRequest request) {
            if (count <= 1 || request.getMessagesCount() == 0) {
                return null;
            }
            int shard = ShardHash.shardOf(request.getMessages(0).getTopic(), count);
            for (int i = 1; i < request.getMessagesCount(); i++) {
                if (ShardHash.shardOf(request.getMessages(i).getTopic(), count) != shard) {
                    return null;
                }
            }
            return leaders[shard];
        }
    }

    private final ServerPool pool;
    private final AtomicBoolean asking = new AtomicBoolean();
    private volatile Snapshot snapshot;
    /** The servers do not know the call (older than shards): stop asking. */
    private volatile boolean unsupported;

    ShardMap(ServerPool pool) {
        this.pool = pool;
    }

    /** The server that should get {@code request} first: its shard's leader when known, else the pool's current. */
    ServerPool.Endpoint route(PublishRequest request) {
        Snapshot s = snapshot;
        if (!unsupported && (s == null || System.nanoTime() - s.fetchedNanos() > REFRESH_NANOS)) {
            refresh();
        }
        String leader = s == null ? null : s.leaderFor(request);
        ServerPool.Endpoint endpoint = leader == null ? null : pool.endpointOf(leader);
        return endpoint != null && !pool.passedOver(endpoint) ? endpoint : pool.current();
    }

    /**
     * The positions of {@code request}'s messages grouped by shard, in shard order, when the map is
     * known and they lie on several shards (each group then goes to its own leader); null otherwise.
     */
    java.util.List<java.util.List<Integer>> split(PublishRequest request) {
        Snapshot s = snapshot;
        if (s == null || s.count() <= 1 || request.getMessagesCount() < 2) {
            return null;
        }
        java.util.Map<Integer, java.util.List<Integer>> positions = new java.util.TreeMap<>();
        for (int i = 0; i < request.getMessagesCount(); i++) {
            positions.computeIfAbsent(ShardHash.shardOf(request.getMessages(i).getTopic(), s.count()),
                    k -> new java.util.ArrayList<>()).add(i);
        }
        return positions.size() < 2 ? null : java.util.List.copyOf(positions.values());
    }

    /**
     * The address of shard {@code shard}'s leader as last learned, or null when unknown; asks for a
     * newer map in the background when this one is old.
     */
    String leaderOf(int shard) {
        Snapshot s = snapshot;
        if (!unsupported && (s == null || System.nanoTime() - s.fetchedNanos() > REFRESH_NANOS)) {
            refresh();
        }
        return s == null || shard >= s.count() ? null : s.leaders()[shard];
    }

    /** The shard of {@code request}'s first message when the map knows several shards; -1 otherwise. */
    int shardOf(PublishRequest request) {
        Snapshot s = snapshot;
        return s == null || s.count() <= 1 || request.getMessagesCount() == 0 ? -1
                : ShardHash.shardOf(request.getMessages(0).getTopic(), s.count());
    }

    /** A routed attempt failed: the map may be out of date. */
    void stale() {
        Snapshot s = snapshot;
        if (s != null && s.count() > 1) {
            snapshot = new Snapshot(s.count(), new String[s.count()], s.fetchedNanos());
            refresh();
        }
    }

    /** The map as last learned (tests), or null. */
    Snapshot current() {
        return snapshot;
    }

    private void refresh() {
        if (!asking.compareAndSet(false, true)) {
            return;
        }
        ServerPool.Endpoint endpoint = pool.current();
        try {
            BrokerGrpc.newStub(endpoint.channel()).withDeadlineAfter(ASK_DEADLINE_MS, TimeUnit.MILLISECONDS)
                    .shards(ShardsRequest.getDefaultInstance(), new StreamObserver<>() {
                        @Override
                        public void onNext(ShardsResponse r) {
                            String[] leaders = new String[Math.max(r.getCount(), 0)];
                            for (ShardLeader l : r.getLeadersList()) {
                                if (l.getShard() >= 0 && l.getShard() < leaders.length && !l.getAddress().isEmpty()) {
                                    leaders[l.getShard()] = l.getAddress();
                                }
                            }
                            snapshot = new Snapshot(r.getCount(), leaders, System.nanoTime());
                        }

                        @Override
                        public void onError(Throwable t) {
                            if (Status.fromThrowable(t).getCode() == Status.Code.UNIMPLEMENTED) {
                                unsupported = true;
                                LOG.debug("server {} serves no shard map: publishing through it", endpoint.address());
                            } else if (snapshot == null) { // not asked again on every publish meanwhile
                                snapshot = new Snapshot(1, new String[1], System.nanoTime());
                            }
                            asking.set(false);
                        }

                        @Override
                        public void onCompleted() {
                            asking.set(false);
                        }
                    });
        } catch (RuntimeException e) { // a channel shut down while closing
            asking.set(false);
        }
    }
}
