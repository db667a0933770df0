package io.hourglass.core.storage;

import com.google.protobuf.InvalidProtocolBufferException;
import io.hourglass.core.proto.TopicGroups;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The topic registry (topic → durable groups) of the {@code meta} column family, cached in memory.
 * Read from any thread; changed only by {@link EventStore#commit} (the apply thread) and
 * {@link EventStore#restoreFrom}. Each topic's set is replaced, never mutated.
 */
final class TopicRegistry {
    static final String TOPIC_PREFIX = "topic/";
    private final Map<String, Set<String>> groups = new ConcurrentHashMap<>();

    Set<String> durableGroups(String topic) {
        return groups.getOrDefault(topic, Set.of());
    }

    Map<String, Set<String>> all() {
        return Map.copyOf(groups);
    }

    /** Takes over what a committed batch wrote ({@link StoreBatch#putTopicGroups}). */
    void apply(Map<String, Set<String>> changes) {
        changes.forEach((topic, g) -> {
            if (g.isEmpty()) {
                groups.remove(topic);
            } else {
                groups.put(topic, Set.copyOf(g));
            }
        });
    }

    /** Forgets the cache and reads the registry again from the store's {@code meta} entries. */
    void reload(EventStore store) {
        groups.clear();
        byte[] prefix = TOPIC_PREFIX.getBytes(StandardCharsets.UTF_8);
        byte[] end = prefix.clone();
        end[end.length - 1]++;
        store.scan(d -> d.meta, prefix, end, (k, v) -> {
            String topic = new String(k, prefix.length, k.length - prefix.length, StandardCharsets.UTF_8);
            try {
                groups.put(topic, Set.copyOf(TopicGroups.parseFrom(v).getGroupsList()));
            } catch (InvalidProtocolBufferException e) {
                throw new StorageException("corrupt topic registry entry for " + topic, e);
            }
            return true;
        });
    }
}
