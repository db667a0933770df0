package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.storage.EventKey;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The in-flight tracker's per-consumer index: a disconnect releases exactly the consumer's own
 * entries without scanning the others, and a delivery recorded after the release (a dispatcher
 * pass that read the route before the disconnect) is refused instead of held until the timeout.
 */
@Timeout(30)
class InFlightIndexTest {
    private static final long TIMEOUT_MS = 5_000;
    private static final long TOPIC = EventKey.topicHash("t");
    private final InFlightTracker tracker = new InFlightTracker(TIMEOUT_MS);

    private static Consumer consumer(String id, String group) {
        return new Consumer(id, "t", group, 16, new Consumer.Sink() {
            @Override
            public void deliveriesAvailable() {
            }

            @Override
            public void closed(String reason) {
            }
        });
    }

    private static EventKey key(long seq) {
        return new EventKey(TOPIC, 1_000, seq);
    }

    @Test
    void aClaimForAConsumerAlreadyReleasedIsRefusedAndDoesNotBlockTheMessage() {
        Consumer a = consumer("a", "g");
        tracker.releaseConsumer(a);
        assertEquals(0, tracker.claim(key(1), a.recipient(), a, 0));
        assertFalse(tracker.isBlocked(key(1), a.recipient(), 1), "nobody holds it: redeliverable at once");
        assertEquals(0, tracker.held());
    }

    @Test
    void releasingAConsumerReleasesOnlyItsOwnHeldMessages() {
        Consumer a = consumer("a", "g");
        Consumer b = consumer("b", "g");
        List<EventKey> bKeys = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            tracker.claim(key(i), a.recipient(), a, 0);
        }
        for (int i = 1_000; i < 1_003; i++) {
            tracker.claim(key(i), b.recipient(), b, 0);
            bKeys.add(key(i));
        }
        assertEquals(bKeys, tracker.releaseConsumer(b).stream().sorted().toList());
        assertEquals(1_000, tracker.held(), "a's messages stay with a");
        assertTrue(tracker.isBlocked(key(0), a.recipient(), 1));
        assertFalse(tracker.isBlocked(key(1_000), b.recipient(), 1));
    }

    @Test
    void theIndexForgetsMessagesTheConsumerNoLongerHolds() {
        Consumer a = consumer("a", "g");
        for (int i = 0; i < 100; i++) {
            tracker.claim(key(i), a.recipient(), a, 0);
        }
        for (int i = 0; i < 50; i++) {
            tracker.markAcked(key(i), a.recipient());
        }
        for (int i = 50; i < 90; i++) {
            tracker.release(key(i), a.recipient());
        }
        for (int i = 90; i < 100; i++) {
            tracker.clearMessage(key(i));
        }
        assertEquals(0, tracker.indexedFor("a"), "a long-lived consumer's index does not grow with what it acked");
        assertEquals(List.of(), tracker.releaseConsumer(a));
    }

    @Test
    void aClaimByAnotherMemberMovesTheMessageToIt() {
        Consumer a = consumer("a", "g");
        Consumer b = consumer("b", "g");
        tracker.claim(key(1), a.recipient(), a, 0);
        tracker.claim(key(1), b.recipient(), b, TIMEOUT_MS); // a's copy timed out, b got it
        assertEquals(0, tracker.indexedFor("a"));
        assertEquals(List.of(), tracker.releaseConsumer(a), "a no longer holds it");
        assertTrue(tracker.isBlocked(key(1), b.recipient(), TIMEOUT_MS + 1));
        assertEquals(List.of(key(1)), tracker.releaseConsumer(b));
    }

    @Test
    void aUniversalConsumersEntriesGoAwayWithIt() {
        Consumer u = consumer("u", "");
        Consumer v = consumer("v", "");
        tracker.claim(key(1), u.recipient(), u, 0);
        tracker.claim(key(1), v.recipient(), v, 0);
        tracker.claim(key(2), u.recipient(), u, 0);
        tracker.markAcked(key(1), v.recipient());
        tracker.markAcked(key(2), u.recipient());
        assertFalse(tracker.universalSettled(key(1)), "u has not acked it");
        assertEquals(List.of(key(1)), tracker.releaseConsumer(u), "only the unacked one was held");
        assertTrue(tracker.universalSettled(key(1)), "the one left has acked it");
        assertFalse(tracker.universalSettled(key(2)), "nobody tracked any more");
        assertEquals(0, tracker.indexedFor("u"));
    }
}
