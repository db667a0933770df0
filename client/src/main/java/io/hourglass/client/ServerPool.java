package io.hourglass.client;

import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One channel per configured server and the one currently in use.
 *
 * <p>Requests stick to the current server — any node serves any request, and the one that
 * answered last is likely healthy — and move to the next server (round-robin) when a request
 * on the current one fails with {@code UNAVAILABLE}. A server the {@link StallWatch} found silent
 * (a paused process) is passed over for a while — by the round-robin and by followers' leader hints —
 * unless every other server is too: during the election that replaces a paused leader the others
 * answer UNAVAILABLE, and the round-robin used to come back to the paused one, where each call
 * waited out another stall timeout (publishes were held until the pause ended in 11 of 28 paused
 * leaders on 3 and 5 nodes). Thread-safe: the current index is an atomic, so concurrent failures
 * of the same server advance it once.
 */
final class ServerPool implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServerPool.class);

    /** A server and its channel; {@code index} is its position in the pool. */
    record Endpoint(int index, ServerAddress address, ManagedChannel channel) {
    }

    /** Configured servers first; leaders that followers named are appended (copy-on-write). */
    private final List<Endpoint> endpoints;
    private final ChannelFactory channelFactory;
    private final AtomicInteger current = new AtomicInteger();
    /** Servers found stalled, by index: until when (System.nanoTime) they are passed over. */
    private final java.util.Map<Integer, Long> passOverUntil = new java.util.concurrent.ConcurrentHashMap<>();
    /** Watches calls for a server that stops answering; off until the client sets its own. */
    private volatile StallWatch stallWatch = new StallWatch(this, java.time.Duration.ZERO, null);

    ServerPool(List<ServerAddress> servers, ChannelFactory channelFactory) {
        this.channelFactory = channelFactory;
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("at least one server is required");
        }
        List<Endpoint> opened = new ArrayList<>(servers.size());
        for (ServerAddress address : servers) {
            opened.add(new Endpoint(opened.size(), address, channelFactory.open(address)));
        }
        this.endpoints = new java.util.concurrent.CopyOnWriteArrayList<>(opened);
    }

    /** The client's stall watch, for the calls made through this pool's channels. */
    StallWatch stallWatch() {
        return stallWatch;
    }

    void stallWatch(StallWatch value) {
        this.stallWatch = value;
    }

    Endpoint current() {
        return endpoints.get(current.get());
    }

    /** Moves off {@code failed} to the next server, unless another caller already did. */
    void failover(Endpoint failed) {
        failover(failed, null);
    }

    /**
     * {@code silent} stopped answering while its connection stays open: moves off it and passes it
     * over for {@code forNanos}, unless every other server is passed over too.
     */
    void stalled(Endpoint silent, long forNanos) {
        passOverUntil.put(silent.index(), System.nanoTime() + forNanos);
        failover(silent);
    }

    /** Whether {@code endpoint} was found stalled recently enough to be passed over. */
    boolean passedOver(Endpoint endpoint) {
        Long until = passOverUntil.get(endpoint.index());
        if (until == null) {
            return false;
        }
        if (System.nanoTime() - until >= 0) {
            passOverUntil.remove(endpoint.index(), until);
            return false;
        }
        return true;
    }

    /**
     * Moves off {@code failed}: to the server a follower named as leader when it is one of ours,
     * else to the next one. Returns true when it followed a hint.
     */
    boolean failover(Endpoint failed, String leaderHint) {
        if (leaderHint != null) {
            Endpoint leader = endpointFor(leaderHint);
            if (leader != null && leader.index() != failed.index() && !passedOver(leader)) {
                if (current.compareAndSet(failed.index(), leader.index())) {
                    LOG.info("server {} is not the leader, following it to {}", failed.address(), leader.address());
                }
                return true;
            }
        }
        int size = endpoints.size();
        int next = (failed.index() + 1) % size;
        for (int step = 1; step < size; step++) {
            int candidate = (failed.index() + step) % size;
            if (!passedOver(endpoints.get(candidate))) {
                next = candidate;
                break;
            }
        }
        if (current.compareAndSet(failed.index(), next) && size > 1) {
            LOG.info("server {} unavailable, switching to {}", failed.address(),
                    endpoints.get(next).address());
        }
        return false;
    }

    /** The endpoint of a server a follower named, opened and added to the pool if it is new. */
    /** The endpoint of the server at {@code address} (host:port), opened if it is new; null if unreadable. */
    Endpoint endpointOf(String address) {
        return endpointFor(address);
    }

    private synchronized Endpoint endpointFor(String hint) {
        for (Endpoint e : endpoints) {
            if (e.address().toString().equals(hint)) {
                return e;
            }
        }
        ServerAddress address;
        try {
            address = ServerAddress.parse(hint);
        } catch (IllegalArgumentException e) {
            LOG.warn("ignoring unreadable leader hint '{}'", hint);
            return null;
        }
        Endpoint added = new Endpoint(endpoints.size(), address, channelFactory.open(address));
        endpoints.add(added);
        LOG.info("learned of server {} from a follower's leader hint", address);
        return added;
    }

    int size() {
        return endpoints.size();
    }

    /** Shuts every channel down, waiting up to {@code grace} for calls to finish. */
    void shutdown(Duration grace) {
        for (Endpoint endpoint : endpoints) {
            endpoint.channel().shutdown();
        }
        long deadline = System.nanoTime() + grace.toNanos();
        for (Endpoint endpoint : endpoints) {
            try {
                long left = Math.max(0, deadline - System.nanoTime());
                if (!endpoint.channel().awaitTermination(left, TimeUnit.NANOSECONDS)) {
                    endpoint.channel().shutdownNow();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                endpoint.channel().shutdownNow();
            }
        }
    }

    @Override
    public void close() {
        shutdown(Duration.ZERO);
    }
}
