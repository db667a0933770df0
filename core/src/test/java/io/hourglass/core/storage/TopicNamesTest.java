package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The names of the topics with stored messages, read one message per topic (the console lists them
 * every 2 s): every topic once however many messages it holds, filtered by prefix; a topic whose
 * messages are all gone is not listed.
 */
@Timeout(30)
class TopicNamesTest {
    @Test
    void eachTopicOnceFilteredByPrefix(@TempDir Path dir) {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            StateApplier applier = new StateApplier(store);
            Set<String> expected = new TreeSet<>();
            long index = 1;
            for (int t = 0; t < 40; t++) {
                String topic = (t % 2 == 0 ? "orders-" : "audit-") + t;
                expected.add(topic);
                PutCmd.Builder put = PutCmd.newBuilder();
                for (int m = 0; m < 1 + t * 7; m++) { // due times spread, so topics' keys interleave in time
                    put.addMessages(NewMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8("x"))
                            .setDelayMs(m * 1_000L));
                }
                applier.apply(Command.newBuilder().setPut(put).setStampedAtMs(1_000_000).build(), new TermIndex(1, index++));
            }
            assertEquals(expected, names(store, ""));
            assertEquals(expected.stream().filter(n -> n.startsWith("orders-")).collect(java.util.stream.Collectors.toSet()),
                    new TreeSet<>(names(store, "orders-")));
            assertEquals(Set.of(), Set.copyOf(names(store, "none")));

            List<EventKey> gone = new ArrayList<>();
            store.queue().scanTopic("audit-1", (k, m) -> gone.add(k));
            for (EventKey k : gone) {
                applier.apply(io.hourglass.core.command.QueueCommands.deleteMessage("audit-1", k).toBuilder()
                        .setStampedAtMs(1_000_000).build(), new TermIndex(1, index++));
            }
            expected.remove("audit-1");
            assertEquals(expected, names(store, ""));
        }
    }

    private static Set<String> names(EventStore store, String prefix) {
        List<String> names = new ArrayList<>();
        store.topicFigures().names(prefix, names::add);
        Set<String> once = new TreeSet<>(names);
        assertEquals(once.size(), names.size(), "each topic once: " + names);
        return once;
    }
}
