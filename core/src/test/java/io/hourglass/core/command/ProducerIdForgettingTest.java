package io.hourglass.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.ProducerIds;
import io.hourglass.core.storage.TermIndex;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Forgetting producer ids skips the read while the window has not reached the oldest remembered
 * id; the ids forgotten, and so the replica's bytes, must not depend on whether a replica knew the
 * oldest id or had to look it up: one store applies a script straight through, the other is
 * reopened (which forgets what it knew) before every entry, and both must digest the same.
 */
@Timeout(60)
class ProducerIdForgettingTest {
    private static final long W = ProducerIds.WINDOW_MS;

    @TempDir
    Path dir;

    private static Command put(long stamp, String... producerIds) {
        PutCmd.Builder p = PutCmd.newBuilder();
        for (String id : producerIds) {
            p.addMessages(NewMessage.newBuilder().setTopic("t").setPayload(ByteString.copyFromUtf8(id))
                    .setProducerId(id));
        }
        return Command.newBuilder().setStampedAtMs(stamp).setPut(p).build();
    }

    /** Stamps, each with the ids its entry publishes: ids age out, one leader's clock was behind. */
    private static final Object[][] SCRIPT = {
        {1_000L, "a", "b"},
        {2_000L, "c"},
        {2_500L},
        {1_000L + W - 1, "d"},     // the window has not reached a and b yet
        {1_000L + W + 1},          // a and b go
        {1_500L + W, "e"},         // remembered at a stamp older than c: the oldest now
        {100L + W + W},            // c, d and e... but only those older than the window
        {2_500L + W + W, "a"},     // a is new again
        {5_000L + W + W + W},      // everything goes
        {5_001L + W + W + W, "f"},
    };

    @Test
    void replicasForgetTheSameIdsWhetherTheyKnewTheOldestOrLookedItUp() {
        try (EventStore straight = EventStore.open(dir.resolve("straight"))) {
            StateApplier a = new StateApplier(straight);
            EventStore reopened = EventStore.open(dir.resolve("reopened"));
            try {
                for (int i = 0; i < SCRIPT.length; i++) {
                    long stamp = (Long) SCRIPT[i][0];
                    String[] ids = new String[SCRIPT[i].length - 1];
                    for (int j = 1; j < SCRIPT[i].length; j++) {
                        ids[j - 1] = (String) SCRIPT[i][j];
                    }
                    a.apply(put(stamp, ids), new TermIndex(1, i + 1));
                    new StateApplier(reopened).apply(put(stamp, ids), new TermIndex(1, i + 1));
                    assertEquals(straight.digest(), reopened.digest(), "after entry " + (i + 1));
                    reopened.close();
                    reopened = EventStore.open(dir.resolve("reopened"));
                }
            } finally {
                reopened.close();
            }
            assertTrue(straight.keyOfProducerId("f").isPresent());
            assertTrue(straight.keyOfProducerId("a").isEmpty(), "forgotten by the last window");
        }
    }

    @Test
    void anIdRememberedAtAnOlderStampThanTheOldestKnownIsStillForgottenOnTime() {
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            StateApplier applier = new StateApplier(store);
            applier.apply(put(10_000, "new"), new TermIndex(1, 1));
            applier.apply(put(10_001), new TermIndex(1, 2)); // learns: the oldest id is at 10 000
            applier.apply(put(5_000, "old"), new TermIndex(1, 3)); // a leader whose clock was behind
            applier.apply(put(5_001 + W), new TermIndex(1, 4));
            assertTrue(store.keyOfProducerId("old").isEmpty(), "forgotten once the window passed its stamp");
            assertTrue(store.keyOfProducerId("new").isPresent());
        }
    }
}
