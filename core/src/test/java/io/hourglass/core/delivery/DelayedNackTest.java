package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hourglass.core.proto.Command;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Delayed NACKs (DESIGN §9): not redelivered before the delay, redelivered then, a group's across a leader change. */
@Timeout(30)
class DelayedNackTest {
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

    @Test
    void aGroupsDelayedNackIsRedeliveredWhenTheDelayRunsOutNotBefore() {
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        Delivery d = c.drain().get(0);

        f.engine.nack(c.consumer, d.tag(), 5_000);

        assertEquals(1, f.replicator.proposed().stream().filter(Command::hasDefer).count(), "the deferral is replicated");
        f.advance(Duration.ofMillis(4_999));
        assertEquals(0, f.engine.dispatchOnce(), "not before the delay");
        f.advance(Duration.ofMillis(1));
        assertEquals(1, f.engine.dispatchOnce());
        Delivery again = c.drain().get(0);
        assertEquals(2, again.attempt());
    }

    @Test
    void aNewLeaderWaitsOutTheReplicatedDeferral() {
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        f.engine.nack(c.consumer, c.drain().get(0).tag(), 10_000);

        f.engine.setLeading(false); // the in-flight state and the leader's own deferrals are gone
        f.engine.setLeading(true);
        var next = f.subscribe("t", "g");
        f.advance(Duration.ofSeconds(5));
        assertEquals(0, f.engine.dispatchOnce(), "the deferral came back from the store");
        assertEquals(List.of(), next.payloads());
        f.advance(Duration.ofSeconds(5));
        assertEquals(1, f.engine.dispatchOnce());
        assertEquals(List.of("m"), next.payloads());
    }

    @Test
    void aUniversalConsumersDelayedNackWaitsOnThisLeaderAndIsNotReplicated() {
        var u = f.subscribe("t", "");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        int before = f.replicator.proposed().size();

        f.engine.nack(u.consumer, u.drain().get(0).tag(), 2_000);

        assertEquals(before, f.replicator.proposed().size());
        assertEquals(0, f.engine.dispatchOnce());
        f.advance(Duration.ofSeconds(2));
        assertEquals(1, f.engine.dispatchOnce());
        assertEquals(List.of("m"), u.payloads());
    }

    @Test
    void aPlainNackStillRedeliversAtOnce() {
        var c = f.subscribe("t", "g");
        f.publish("t", 0, 0, "m");
        f.engine.dispatchOnce();
        f.engine.nack(c.consumer, c.drain().get(0).tag());
        assertEquals(1, f.engine.dispatchOnce());
    }

    @Test
    void theDeferralGoesWithItsMessage() {
        var c = f.subscribe("t", "g");
        var key = f.publish("t", 0, 0, "m").get(0);
        f.engine.dispatchOnce();
        f.engine.nack(c.consumer, c.drain().get(0).tag(), 60_000);
        AtomicInteger stored = new AtomicInteger();
        f.store.queue().scanDeferred((k, g, until) -> stored.incrementAndGet() > 0);
        assertEquals(1, stored.get());

        f.engine.cancel("t", key).join();

        stored.set(0);
        f.store.queue().scanDeferred((k, g, until) -> stored.incrementAndGet() > 0);
        assertEquals(0, stored.get(), "deleted in the message's batch");
    }
}
