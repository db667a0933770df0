package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.command.PublishValidator;
import io.hourglass.core.command.QueueCommands;
import io.hourglass.core.config.LimitsConfig;
import io.hourglass.core.config.Settings;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.storage.EventKey;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recurring messages (DESIGN §9): a keyed message with {@code every} fires at each period as its
 * own message, re-armed at apply time; no catch-up burst after downtime; one firing however it is
 * removed first (the janitor's FireCmd, or its consumers' ACK); cancelled by its key.
 */
@Timeout(30)
class RecurringTest {
    private static final long EVERY = 10_000;
    @TempDir
    Path dir;
    private DeliveryFixture f;

    @BeforeEach
    void open() {
        f = new DeliveryFixture(dir, DeliveryFixture.config(1024, 16));
    }

    @AfterEach
    void close() {
        f.close();
    }

    private EventKey publishEvery(long delayMs) {
        NewMessage m = QueueCommands.message("t", ByteString.copyFromUtf8("tick"), Map.of(), delayMs, 0, "", "k")
                .toBuilder().setEveryMs(EVERY).build();
        return EventKey.fromBytes(f.replicator.propose(QueueCommands.publish(List.of(m))).join()
                .getPublishedKeys(0).toByteArray());
    }

    private EventKey armed() {
        return f.store.queue().keyed("t", "k").orElseThrow();
    }

    @Test
    void itFiresEveryPeriodEachFiringItsOwnMessageDueOnTheGrid() {
        var c = f.subscribe("t", "g");
        EventKey first = publishEvery(0);
        assertEquals(f.manualClock.millis() + EVERY, first.dueAtMs(), "without a delay the first firing is one period away");
        assertEquals(0, f.engine.dispatchOnce());
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            f.advance(Duration.ofMillis(EVERY));
            assertEquals(1, f.engine.fireDue(), "firing " + i + " re-armed");
            assertEquals(1, f.engine.dispatchOnce());
            Delivery d = c.drain().get(0);
            ids.add(d.tag().toHex());
            f.engine.ack(c.consumer, d.tag());
            assertEquals(first.dueAtMs() + (i + 1) * EVERY, armed().dueAtMs(), "the next firing is on the grid");
        }
        assertEquals(3, ids.stream().distinct().count(), "each firing has its own id");
        assertEquals(0, f.engine.fireDue(), "nothing else is due");
    }

    @Test
    void afterDowntimeItFiresOnceNotOncePerMissedPeriod() {
        var c = f.subscribe("t", "g");
        EventKey first = publishEvery(1_000);
        f.advance(Duration.ofMillis(1_000 + 6 * EVERY + 500)); // six periods missed
        assertEquals(1, f.engine.fireDue());
        assertEquals(1, f.engine.dispatchOnce());
        assertEquals(List.of("tick"), c.payloads());
        assertEquals(first.dueAtMs() + 7 * EVERY, armed().dueAtMs(), "the next period after now, not a backlog");
    }

    @Test
    void aFiringAcknowledgedBeforeTheLeaderFiredItIsReArmedWithItsDeletionAndNeverTwice() {
        var c = f.subscribe("t", "g");
        EventKey first = publishEvery(0);
        f.advance(Duration.ofMillis(EVERY));
        f.engine.dispatchOnce();
        f.engine.ack(c.consumer, c.drain().get(0).tag());
        f.engine.flushDeletes().join();
        assertTrue(f.store.queue().message(first).isEmpty());
        EventKey next = armed();
        assertNotEquals(first, next);
        assertEquals(first.dueAtMs() + EVERY, next.dueAtMs());
        assertEquals(0, f.engine.fireDue(), "fired with its deletion: no second re-arm");
    }

    @Test
    void aCancelByKeyEndsTheRecurrence() {
        var c = f.subscribe("t", "g");
        publishEvery(0);
        f.advance(Duration.ofMillis(EVERY));
        f.engine.fireDue();
        f.engine.dispatchOnce();
        f.engine.ack(c.consumer, c.drain().get(0).tag());
        f.engine.flushDeletes().join();
        f.engine.cancelKeyed("t", "k").join();
        assertTrue(f.store.queue().keyed("t", "k").isEmpty());
        f.advance(Duration.ofMillis(3 * EVERY));
        assertEquals(0, f.engine.fireDue());
        assertEquals(0, f.engine.dispatchOnce());
    }

    @Test
    void aCancelByKeyThatRacesTheReArmStillEndsTheRecurrence() {
        var c = f.subscribe("t", "g");
        publishEvery(0);
        f.advance(Duration.ofMillis(EVERY));
        f.engine.dispatchOnce();
        c.drain(); // delivered, not re-armed yet: the key still names this firing
        f.replicator.deferNext();
        var cancel = f.engine.cancelKeyed("t", "k");
        assertEquals(1, f.engine.fireDue(), "the leader re-arms before the cancel commits");
        f.replicator.commitDeferred();
        assertEquals(CancelOutcome.ALREADY_DELIVERED, cancel.join());
        assertTrue(f.store.queue().keyed("t", "k").isEmpty(), "the firing armed meanwhile went with it");
        f.advance(Duration.ofMillis(3 * EVERY));
        assertEquals(0, f.engine.fireDue());
    }

    @Test
    void aCancelByKeyThatRacesTheFiringsDeletionStillEndsTheRecurrence() {
        var c = f.subscribe("t", "g");
        publishEvery(0);
        f.advance(Duration.ofMillis(EVERY));
        f.engine.dispatchOnce();
        Delivery d = c.drain().get(0); // delivered, not re-armed yet: the key still names this firing
        f.replicator.deferNext();
        var cancel = f.engine.cancelKeyed("t", "k");
        f.engine.ack(c.consumer, d.tag());
        f.engine.flushDeletes().join(); // the firing goes and re-arms before the cancel commits
        EventKey next = armed();
        f.replicator.commitDeferred();
        assertEquals(CancelOutcome.ALREADY_DELIVERED, cancel.join());
        assertTrue(f.store.queue().message(next).isEmpty(), "the firing armed with the deletion went with the cancel");
        assertTrue(f.store.queue().keyed("t", "k").isEmpty(), "nothing is armed under the key");
        f.advance(Duration.ofMillis(3 * EVERY));
        assertEquals(0, f.engine.fireDue());
        assertEquals(0, f.engine.dispatchOnce());
    }

    @Test
    void aCancelByKeyWhoseMessageWentLeavesAMessagePublishedUnderTheKeySince() {
        var c = f.subscribe("t", "g");
        NewMessage once = QueueCommands.message("t", ByteString.copyFromUtf8("once"), Map.of(), 0, 0, "", "k");
        f.replicator.propose(QueueCommands.publish(List.of(once))).join();
        f.engine.dispatchOnce();
        Delivery d = c.drain().get(0);
        f.replicator.deferNext();
        var cancel = f.engine.cancelKeyed("t", "k");
        f.engine.ack(c.consumer, d.tag());
        f.engine.flushDeletes().join();
        NewMessage later = QueueCommands.message("t", ByteString.copyFromUtf8("later"), Map.of(), 60_000, 0, "", "k");
        f.replicator.propose(QueueCommands.publish(List.of(later))).join();
        EventKey since = armed();
        f.replicator.commitDeferred();
        assertThrows(java.util.concurrent.CompletionException.class, cancel::join, "the cancelled message was gone");
        assertEquals(since, armed(), "what was published under the key since is not what the cancel named");
    }

    @Test
    void aNewLeaderFiresWhatFellDueUnderTheOldOneOnce() {
        publishEvery(0);
        f.advance(Duration.ofMillis(EVERY));
        f.engine.setLeading(false);
        f.engine.setLeading(true);
        assertEquals(1, f.engine.fireDue());
        assertEquals(0, f.engine.fireDue());
    }

    @Test
    void aRecurringMessageNeedsAKeyAndAPeriodOfAtLeastOneSecond() {
        PublishValidator v = new PublishValidator(LimitsConfig.from(Settings.empty()));
        NewMessage noKey = QueueCommands.message("t", ByteString.copyFromUtf8("x"), Map.of(), 0, 0, "")
                .toBuilder().setEveryMs(5_000).build();
        assertTrue(assertThrows(InvalidRequestException.class, () -> v.validateBatch(List.of(noKey))).getMessage()
                .contains("needs a key"));
        NewMessage fast = noKey.toBuilder().setKey("k").setEveryMs(500).build();
        assertTrue(assertThrows(InvalidRequestException.class, () -> v.validateBatch(List.of(fast))).getMessage()
                .contains("between 1s"));
        v.validateBatch(List.of(fast.toBuilder().setEveryMs(1_000).build()));
    }
}
