package io.hourglass.core.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The due view's counts from the time index's keys: per window over all topics, and per topic in time order. */
@Timeout(30)
class DueCountTest {
    private static final long STAMP = 1_000_000;

    private static void put(StateApplier applier, long index, String topic, long... delaysMs) {
        PutCmd.Builder put = PutCmd.newBuilder();
        for (long d : delaysMs) {
            put.addMessages(NewMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8("x")).setDelayMs(d));
        }
        applier.apply(Command.newBuilder().setPut(put).setStampedAtMs(STAMP).build(), new TermIndex(1, index));
    }

    @Test
    void countsMessagesDueAfterNowWithinEachWindowAcrossTopics(@TempDir Path dir) {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            StateApplier applier = new StateApplier(store);
            put(applier, 1, "a", 0, 30_000, 60_000, 3_600_000, 90_000_000);
            put(applier, 2, "b", 59_000, 7_200_000);
            put(applier, 3, "c", 0);

            long[] counts = store.countDueWithin(STAMP, 60_000, 3_600_000, 86_400_000);

            assertArrayEquals(new long[] {3, 4, 5}, counts,
                    "due now is not counted; a:30s,60s b:59s within 1m; +a:1h; +b:2h; a:25h beyond a day");
            assertArrayEquals(new long[] {0, 0, 0}, store.countDueWithin(STAMP + 100_000_000, 60_000, 3_600_000, 86_400_000));
        }
    }

    @Test
    void aTopicsDueTimesComeInOrderFromItsKeysAlone(@TempDir Path dir) {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            StateApplier applier = new StateApplier(store);
            put(applier, 1, "a", 5_000, 1_000);
            put(applier, 2, "b", 2_000);
            List<Long> due = new ArrayList<>();
            store.scanDueTimes("a", due::add);
            assertEquals(List.of(STAMP + 1_000, STAMP + 5_000), due);
        }
    }
}
