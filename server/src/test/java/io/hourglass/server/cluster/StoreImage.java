package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;

import io.hourglass.core.proto.StoredMessage;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.TermIndex;
import io.hourglass.server.testing.TestNode;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;

/**
 * What a node's store holds, in a comparable form: the applied log position, every stored message
 * (key in hex → value), the topic registry (topic → durable groups) and every receipt
 * ({@code key/group}) of a registered group. Two replicas that applied the same log have equal
 * images.
 *
 * <p>Taken without stopping writes: compare images of a quiet cluster, or retry until equal.
 */
record StoreImage(TermIndex applied, Map<String, StoredMessage> messages, Map<String, Set<String>> registry,
                  Set<String> receipts) {

    static StoreImage of(EventStore store) {
        TermIndex applied = store.appliedIndex();
        Map<String, Set<String>> registry = new TreeMap<>();
        store.topicRegistry().forEach((topic, groups) -> registry.put(topic, new TreeSet<>(groups)));
        Map<String, StoredMessage> messages = new TreeMap<>();
        Set<String> receipts = new TreeSet<>();
        store.queue().scanAll((key, message) -> {
            messages.put(key.toHex(), message);
            for (String group : registry.getOrDefault(message.getTopic(), Set.of())) {
                if (store.queue().hasReceipt(key, group)) {
                    receipts.add(key.toHex() + "/" + group);
                }
            }
            return true;
        });
        return new StoreImage(applied, messages, registry, receipts);
    }

    /**
     * Waits until every node in {@code nodes} has the same image as the first, and returns it.
     *
     * @throws AssertionError naming the last differences seen, if they stay different
     */
    static StoreImage awaitIdentical(List<TestNode> nodes, Duration atMost, String why) {
        AtomicReference<StoreImage> agreed = new AtomicReference<>();
        AtomicReference<String> lastDifference = new AtomicReference<>("not compared yet");
        try {
            await(why).atMost(atMost).pollInterval(Duration.ofMillis(250)).until(() -> {
                StoreImage reference = of(nodes.get(0).node().store());
                StringBuilder differences = new StringBuilder();
                for (TestNode other : nodes.subList(1, nodes.size())) {
                    String d = reference.differenceFrom(of(other.node().store()));
                    if (!d.isEmpty()) {
                        differences.append(nodes.get(0).id()).append(" vs ").append(other.id()).append(": ").append(d);
                    }
                }
                lastDifference.set(differences.toString());
                agreed.set(reference);
                return differences.isEmpty();
            });
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(why + ": stores still differ after " + atMost + ": " + lastDifference.get(), e);
        }
        return agreed.get();
    }

    /** How many stored messages belong to {@code topic}. */
    static long countTopic(EventStore store, String topic) {
        long[] n = {0};
        store.queue().scanAll((key, message) -> {
            if (message.getTopic().equals(topic)) {
                n[0]++;
            }
            return true;
        });
        return n[0];
    }

    long countTopic(String topic) {
        return messages.values().stream().filter(m -> m.getTopic().equals(topic)).count();
    }

    /** Empty when equal; otherwise a short account of the first differences (for failure messages). */
    String differenceFrom(StoreImage other) {
        StringBuilder d = new StringBuilder();
        if (!applied.equals(other.applied)) {
            d.append("applied ").append(applied).append(" vs ").append(other.applied).append("; ");
        }
        if (!registry.equals(other.registry)) {
            d.append("registry ").append(registry).append(" vs ").append(other.registry).append("; ");
        }
        if (!messages.equals(other.messages)) {
            d.append(messages.size()).append(" vs ").append(other.messages.size()).append(" messages");
            messages.keySet().stream().filter(k -> !other.messages.containsKey(k)).findFirst()
                    .ifPresent(k -> d.append(", only here: ").append(k));
            other.messages.keySet().stream().filter(k -> !messages.containsKey(k)).findFirst()
                    .ifPresent(k -> d.append(", only there: ").append(k));
            messages.keySet().stream().filter(k -> other.messages.containsKey(k)
                            && !messages.get(k).equals(other.messages.get(k))).findFirst()
                    .ifPresent(k -> d.append(", different value: ").append(k));
            d.append("; ");
        }
        if (!receipts.equals(other.receipts)) {
            d.append(receipts.size()).append(" vs ").append(other.receipts.size()).append(" receipts; ");
        }
        return d.toString();
    }

    @Override
    public String toString() {
        return "StoreImage[applied " + applied + ", " + messages.size() + " messages, registry " + registry + ", "
                + receipts.size() + " receipts]";
    }
}
