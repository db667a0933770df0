package io.hourglass.core.delivery;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Registry of live consumers by topic and group, and the routing rule: one consumer per group,
 * round-robin, and every universal consumer. Owned by the delivery loop: every method but
 * {@link #consumers()}, {@link #consumer(String)} and {@link #size()} (which read a concurrent index,
 * for metrics and admin on any thread) runs on that one thread, so nothing here locks.
 */
public final class Hub {
    private final int queueSize;
    private final Runnable wantsPass;
    private final java.util.function.LongSupplier now;
    private final Runnable expiredInBuffer;
    private final Map<String, Map<String, List<Consumer>>> byTopic = new LinkedHashMap<>();
    private final Map<String, Consumer> byId = new ConcurrentHashMap<>();
    /** Round-robin position per "topic\0group". */
    private final Map<String, Integer> cursor = new HashMap<>();

    /**
     * @param wantsPass asks the loop for a dispatch pass (a consumer registered or has room again)
     * @param now the clock a delivery's TTL is checked against again as it leaves a consumer's buffer
     * @param expiredInBuffer counts deliveries dropped there because their TTL passed
     */
    Hub(int queueSize, Runnable wantsPass, java.util.function.LongSupplier now, Runnable expiredInBuffer) {
        this.queueSize = queueSize;
        this.wantsPass = wantsPass;
        this.now = now;
        this.expiredInBuffer = expiredInBuffer;
    }

    /** @param maxUnacked deliveries unsettled on the consumer at once, 0 for no limit (see {@link Consumer}) */
    Consumer register(String topic, String group, Consumer.Sink sink, int maxUnacked) {
        Consumer c = new Consumer(UUID.randomUUID().toString(), topic, group, queueSize, sink, wantsPass, now,
                expiredInBuffer, maxUnacked);
        byTopic.computeIfAbsent(topic, t -> new LinkedHashMap<>())
                .computeIfAbsent(group, g -> new ArrayList<>()).add(c);
        byId.put(c.id(), c);
        wantsPass.run();
        return c;
    }

    /** The live consumer with this id, or null (any thread). */
    Consumer consumer(String id) {
        return byId.get(id);
    }

    boolean unregister(Consumer c) {
        if (byId.remove(c.id()) == null) {
            return false;
        }
        Map<String, List<Consumer>> groups = byTopic.get(c.topic());
        if (groups != null) {
            List<Consumer> members = groups.get(c.group());
            if (members != null) {
                members.remove(c);
                if (members.isEmpty()) {
                    groups.remove(c.group());
                    cursor.remove(c.topic() + '\0' + c.group());
                }
            }
            if (groups.isEmpty()) {
                byTopic.remove(c.topic());
            }
        }
        return true;
    }

    Set<String> topics() {
        return Set.copyOf(byTopic.keySet());
    }

    public Collection<Consumer> consumers() {
        return List.copyOf(byId.values());
    }

    public int size() {
        return byId.size();
    }

    /** Who receives messages of one topic right now. */
    record Route(String topic, Map<String, List<Consumer>> groups, List<Consumer> universal) {
        boolean everyoneFull() {
            for (List<Consumer> members : groups.values()) {
                for (Consumer c : members) {
                    if (c.hasRoom()) {
                        return false;
                    }
                }
            }
            for (Consumer c : universal) {
                if (c.hasRoom()) {
                    return false;
                }
            }
            return true;
        }
    }

    Route route(String topic) {
        Map<String, List<Consumer>> groups = new LinkedHashMap<>();
        List<Consumer> universal = List.of();
        for (Map.Entry<String, List<Consumer>> e : byTopic.getOrDefault(topic, Map.of()).entrySet()) {
            if (e.getKey().isEmpty()) {
                universal = List.copyOf(e.getValue());
            } else {
                groups.put(e.getKey(), List.copyOf(e.getValue()));
            }
        }
        return new Route(topic, groups, universal);
    }

    /**
     * Gives a message to the next member of a group, round-robin, skipping members whose buffer is
     * full. {@code build} turns the chosen consumer into its delivery (and records it in flight), or
     * returns null for a consumer that was disconnected meanwhile, which is skipped.
     * Returns the consumer that took it, or null when no member could.
     */
    Consumer offerToGroup(Route route, String group, Function<Consumer, Delivery> build) {
        List<Consumer> members = route.groups().get(group);
        String cursorKey = route.topic() + '\0' + group;
        int start = cursor.getOrDefault(cursorKey, 0);
        for (int i = 0; i < members.size(); i++) {
            int at = Math.floorMod(start + i, members.size());
            Consumer c = members.get(at);
            if (c.hasRoom()) {
                Delivery d = build.apply(c);
                if (d == null) {
                    continue;
                }
                c.push(d);
                cursor.put(cursorKey, at + 1);
                return c;
            }
        }
        return null;
    }

    /** Closes every consumer (leadership lost or shutdown); their streams end and clients reconnect. */
    void closeAll(String reason) {
        for (Consumer c : consumers()) {
            if (unregister(c)) {
                c.close(reason);
            }
        }
    }
}
