package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A topic's durable groups are stored as the same bytes whatever order the set handed in iterates:
 * replicas build that set from the registry's immutable sets, whose order each JVM seeds at random,
 * so an order-dependent encoding made the replicas' state digests differ (seen in a chaos run).
 */
@Timeout(30)
class TopicGroupsBytesTest {
    @TempDir
    Path dir;

    @Test
    void theStoredGroupsDoNotDependOnTheSetsIterationOrder() {
        List<String> groups = List.of("chaos-b", "chaos-a", "chaos-k-dlq-group", "g");
        EventStore.Digest forward = store("forward", new LinkedHashSet<>(groups));
        List<String> reversed = new java.util.ArrayList<>(groups);
        java.util.Collections.reverse(reversed);
        EventStore.Digest backward = store("backward", new LinkedHashSet<>(reversed));
        assertEquals(forward.families().get("meta"), backward.families().get("meta"));
        assertEquals(forward, backward);
    }

    private EventStore.Digest store(String name, LinkedHashSet<String> groups) {
        try (EventStore store = EventStore.open(dir.resolve(name))) {
            StoreBatch batch = store.newBatch();
            batch.putTopicGroups("t", groups);
            store.commit(batch, new TermIndex(1, 1));
            return store.digest();
        }
    }
}
