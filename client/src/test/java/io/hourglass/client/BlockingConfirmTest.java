package io.hourglass.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A handler that blocks on {@code ackConfirmed()} with a small buffer: the server has written
 * many deliveries before each reply, so the reply is only reachable by reading past the buffer.
 * Without the read-ahead the first handler call waits out its 10 s and nothing else is handled.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BlockingConfirmTest {
    private static final SubscribeOptions SMALL_BUFFER = SubscribeOptions.DEFAULT
            .withBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .withCloseTimeout(Duration.ofSeconds(2))
            .withMaxBuffered(2);

    private FakeBroker broker;
    private HourglassClient client;

    @BeforeEach
    void start() throws Exception {
        broker = new FakeBroker();
        client = HourglassClient.builder().servers(broker.address()).channelFactory(FakeBroker.channels()).build();
    }

    @AfterEach
    void stop() {
        client.close();
        broker.close();
    }

    /**
     * Subscribes with a handler that waits for each delivery's confirmed ACK, adding its payload to
     * {@code confirmed} (or counting a failure); returns the server side once init arrived.
     */
    private FakeBroker.FakeStream subscribeConfirmingEach(SubscribeOptions options, List<String> confirmed,
                                                         AtomicInteger failures) {
        client.subscribe("t", "g", options, (m, ctx) -> {
            try {
                ctx.ackConfirmed().get(10, TimeUnit.SECONDS);
                confirmed.add(m.payloadUtf8());
            } catch (Exception e) {
                failures.incrementAndGet();
            }
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> !broker.streams.isEmpty()
                && broker.stream(0).initReceived());
        return broker.stream(0);
    }

    @Test
    void aHandlerBlockingOnEveryConfirmationGetsThroughABacklog() {
        int backlog = 200;
        List<String> confirmed = new CopyOnWriteArrayList<>();
        AtomicInteger failures = new AtomicInteger();
        FakeBroker.FakeStream stream = subscribeConfirmingEach(SMALL_BUFFER, confirmed, failures);
        // All queued on the server before the first ACK arrives: every reply is written behind them.
        for (int i = 0; i < backlog; i++) {
            stream.deliver("t", "p-" + i, 1);
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> confirmed.size() + failures.get() == backlog);
        assertEquals(0, failures.get());
        for (int i = 0; i < backlog; i++) {
            assertEquals("p-" + i, confirmed.get(i));
        }
        assertTrue(stream.acks().stream().allMatch(a -> a.getAck().getConfirm()));
    }

    @Test
    void withoutOutstandingConfirmationsTheBufferStillBoundsWhatIsRead() {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        AtomicInteger handled = new AtomicInteger();
        client.subscribe("t", "g", SMALL_BUFFER, (m, ctx) -> {
            assertTrue(release.await(20, TimeUnit.SECONDS));
            ctx.ackConfirmed().get(10, TimeUnit.SECONDS);
            handled.incrementAndGet();
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> !broker.streams.isEmpty()
                && broker.stream(0).initReceived());
        FakeBroker.FakeStream stream = broker.stream(0);
        for (int i = 0; i < 50; i++) {
            stream.deliver("t", "p-" + i, 1);
        }
        // subscribed + 2 deliveries, and no more while nothing waits for a confirmation.
        await().atMost(Duration.ofSeconds(5)).until(() -> stream.sent.get() >= 3);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> stream.sent.get() <= 3);
        release.countDown();
        await().atMost(Duration.ofSeconds(20)).until(() -> handled.get() == 50);
    }

    /**
     * A buffer of 16 asks for frames of 2 ({@code init.max_batch}); a credit then stands for a frame,
     * so a blocked handler still bounds what is read (`subscribed`, then 8 frames of 2 deliveries),
     * and every delivery of every frame is handled, in order, once each.
     */
    @Test
    void framesOfSeveralDeliveriesAreCountedAgainstTheBufferAndHandledInOrder() {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        List<String> handled = new CopyOnWriteArrayList<>();
        client.subscribe("t", "g", SMALL_BUFFER.withMaxBuffered(16), (m, ctx) -> {
            assertTrue(release.await(20, TimeUnit.SECONDS));
            handled.add(m.payloadUtf8());
            ctx.ack();
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> !broker.streams.isEmpty()
                && broker.stream(0).initReceived());
        FakeBroker.FakeStream stream = broker.stream(0);
        assertEquals(2, stream.received.get(0).getInit().getMaxBatch());
        for (int i = 0; i < 40; i++) {
            stream.deliverBatch("t", List.of("p-" + 2 * i, "p-" + (2 * i + 1)));
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> stream.sent.get() >= 9);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> stream.sent.get() <= 9);
        release.countDown();
        await().atMost(Duration.ofSeconds(20)).until(() -> handled.size() == 80);
        for (int i = 0; i < 80; i++) {
            assertEquals("p-" + i, handled.get(i));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> stream.delivered.isEmpty()); // every tag ACKed
    }

    @Test
    void aHandlerBlockingOnConfirmationsGetsThroughFramesOfSeveralDeliveries() {
        List<String> confirmed = new CopyOnWriteArrayList<>();
        AtomicInteger failures = new AtomicInteger();
        FakeBroker.FakeStream stream = subscribeConfirmingEach(SMALL_BUFFER.withMaxBuffered(16), confirmed, failures);
        for (int i = 0; i < 100; i++) {
            stream.deliverBatch("t", List.of("p-" + 2 * i, "p-" + (2 * i + 1)));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> confirmed.size() + failures.get() == 200);
        assertEquals(0, failures.get());
        for (int i = 0; i < 200; i++) {
            assertEquals("p-" + i, confirmed.get(i));
        }
    }
}
