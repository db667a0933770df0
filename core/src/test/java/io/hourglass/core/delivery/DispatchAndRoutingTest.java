package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.config.DeliveryConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Dispatcher and hub, driven pass by pass with a manual clock. */
@Timeout(30)
class DispatchAndRoutingTest {
    @TempDir
    Path dir;
    private DeliveryFixture f;

    private DeliveryFixture fixture(DeliveryConfig config) {
        f = new DeliveryFixture(dir, config);
        return f;
    }

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    @Test
    void neverDeliversBeforeTheDueTime() {
        fixture(DeliveryConfig.DEFAULTS);
        var c = f.subscribe("t", "g");
        f.publish("t", 1_000, 0, "later");
        assertEquals(0, f.engine.dispatchOnce());
        f.advance(Duration.ofMillis(999));
        assertEquals(0, f.engine.dispatchOnce(), "1 ms before due");
        f.advance(Duration.ofMillis(1));
        assertEquals(1, f.engine.dispatchOnce());
        Delivery d = c.drain().get(0);
        assertTrue(d.deliveredAtMs() >= d.message().getDueAtMs());
        assertEquals(1, d.attempt());
    }

    @Test
    void scansOnlyTopicsThatHaveConsumers() {
        fixture(DeliveryConfig.DEFAULTS);
        f.publish("idle-1", 0, 0, "a");
        f.publish("idle-2", 0, 0, "b");
        f.publish("busy", 0, 0, "c");
        f.subscribe("busy", "g");
        long before = f.engine.metrics().topicScans.sum();
        f.engine.dispatchOnce();
        assertEquals(1, f.engine.metrics().topicScans.sum() - before);
    }

    @Test
    void groupMembersCompeteRoundRobin() {
        fixture(DeliveryConfig.DEFAULTS);
        var a = f.subscribe("t", "g");
        var b = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m0", "m1", "m2", "m3");
        assertEquals(4, f.engine.dispatchOnce());
        assertEquals(List.of("m0", "m2"), a.payloads());
        assertEquals(List.of("m1", "m3"), b.payloads());
    }

    @Test
    void everyUniversalConsumerAndEveryGroupGetsItsOwnCopy() {
        fixture(DeliveryConfig.DEFAULTS);
        var g1 = f.subscribe("t", "billing");
        var g2 = f.subscribe("t", "audit");
        var u1 = f.subscribe("t", "");
        var u2 = f.subscribe("t", "");
        f.publish("t", 0, 0, "x", "y");
        assertEquals(8, f.engine.dispatchOnce());
        for (var c : List.of(g1, g2, u1, u2)) {
            assertEquals(List.of("x", "y"), c.payloads());
        }
    }

    @Test
    void fullBufferIsSkippedAndTheMessageRetriedNextPass() {
        fixture(DeliveryFixture.config(1, 1024));
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "first", "second");
        assertEquals(1, f.engine.dispatchOnce(), "the second message finds the buffer full");
        assertEquals(0, f.engine.dispatchOnce(), "still full: skipped, not marked in flight");
        assertEquals(List.of("first"), c.payloads());
        assertEquals(1, f.engine.dispatchOnce(), "retried once there is room");
        Delivery d = c.drain().get(0);
        assertEquals("second", d.message().getPayload().toStringUtf8());
        assertEquals(1, d.attempt(), "a skipped message was never sent, so this is its first attempt");
    }

    @Test
    void aFullMemberIsSkippedInFavourOfAnotherMember() {
        fixture(DeliveryFixture.config(1, 1024));
        var a = f.subscribe("t", "g");
        var b = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m0", "m1", "m2");
        assertEquals(2, f.engine.dispatchOnce());
        assertEquals(List.of("m0"), a.payloads());
        assertEquals(List.of("m1"), b.payloads());
    }

    @Test
    void consumerRegistrationAndDueAppliesSignalTheConsumerPath() {
        fixture(DeliveryConfig.DEFAULTS);
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        assertTrue(c.signals.get() > 0, "the transport is told that deliveries are buffered");
    }

    @Test
    void messagesOfOtherTopicsWithTheSameConsumersAreNotMixed() {
        fixture(DeliveryConfig.DEFAULTS);
        var t = f.subscribe("t", "g");
        var u = f.subscribe("u", "g");
        f.publish("t", 0, 0, "for-t");
        f.publish("u", 0, 0, "for-u");
        f.engine.dispatchOnce();
        assertEquals(List.of("for-t"), t.payloads());
        assertEquals(List.of("for-u"), u.payloads());
    }

    @Test
    void dueMessagesGoOutInDueOrder() {
        fixture(DeliveryConfig.DEFAULTS);
        var c = f.subscribe("t", "g");
        f.publish("t", 300, 0, "third");
        f.publish("t", 100, 0, "first");
        f.publish("t", 200, 0, "second");
        f.advance(Duration.ofMillis(300));
        f.engine.dispatchOnce();
        List<String> got = new ArrayList<>(c.payloads());
        assertEquals(List.of("first", "second", "third"), got);
    }
}
