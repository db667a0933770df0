package io.hourglass.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.hourglass.api.v1.Delivery;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SubscriptionTest {
    private static final SubscribeOptions FAST = SubscribeOptions.DEFAULT
            .withBackoff(Duration.ofMillis(10), Duration.ofMillis(50))
            .withCloseTimeout(Duration.ofSeconds(2));

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

    private FakeBroker.FakeStream awaitStream(int index) {
        await().atMost(Duration.ofSeconds(10)).until(() -> broker.streams.size() > index
                && broker.stream(index).initReceived());
        return broker.stream(index);
    }

    @Test
    void aSubscriptionLeavesAServerThatStopsAnswering() throws Exception {
        try (FakeBroker second = new FakeBroker();
             HourglassClient two = HourglassClient.builder().servers(broker.address(), second.address())
                     .channelFactory(FakeBroker.channels()).stallTimeout(Duration.ofMillis(200)).build()) {
            List<String> payloads = new CopyOnWriteArrayList<>();
            Subscription sub = two.subscribe("orders", "g", FAST, (m, ctx) -> {
                payloads.add(m.payloadUtf8());
                ctx.ack();
            });
            awaitStream(0);
            await().atMost(Duration.ofSeconds(5)).until(sub::isSubscribed);

            broker.questionsHang = true; // paused: the stream stays open and silent
            await().atMost(Duration.ofSeconds(5)).until(() -> !second.streams.isEmpty()
                    && second.stream(0).initReceived());
            assertTrue(broker.stream(0).cancelled, "the silent stream was cancelled");
            second.stream(0).deliver("orders", "after", 1);
            await().atMost(Duration.ofSeconds(5)).until(() -> payloads.contains("after"));
        }
    }

    @Test
    void aQuietStreamOnAServerThatAnswersStays() {
        HourglassClient quick = HourglassClient.builder().servers(broker.address()).channelFactory(FakeBroker.channels())
                .stallTimeout(Duration.ofMillis(100)).build();
        try (quick) {
            Subscription sub = quick.subscribe("orders", "g", FAST, (m, ctx) -> ctx.ack());
            awaitStream(0);
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
                    .until(() -> sub.isSubscribed() && broker.streams.size() == 1);
        }
    }

    @Test
    void handlerGetsDeliveriesInOrderOnOneThreadAndAcks() {
        List<String> payloads = new CopyOnWriteArrayList<>();
        List<String> threads = new CopyOnWriteArrayList<>();
        Subscription sub = client.subscribe("orders", "billing", FAST, (m, ctx) -> {
            payloads.add(m.payloadUtf8());
            threads.add(Thread.currentThread().getName());
            ctx.ack();
        });
        FakeBroker.FakeStream stream = awaitStream(0);
        assertEquals("orders", stream.received.get(0).getInit().getTopic());
        assertEquals("billing", stream.received.get(0).getInit().getGroup());

        for (int i = 0; i < 50; i++) {
            stream.deliver("orders", "p-" + i, 1);
        }

        await().atMost(Duration.ofSeconds(10)).until(() -> stream.acks().size() == 50);
        assertEquals(50, payloads.size());
        for (int i = 0; i < 50; i++) {
            assertEquals("p-" + i, payloads.get(i));
        }
        assertEquals(1, threads.stream().distinct().count());
        await().until(sub::isSubscribed);
        assertEquals("c-1", sub.consumerId());
    }

    @Test
    void receivedMessageCarriesTheDelivery() {
        BlockingQueue<ReceivedMessage> received = new LinkedBlockingQueue<>();
        client.subscribe("t", "", FAST, (m, ctx) -> received.add(m));
        Delivery d = awaitStream(0).deliver("t", "hello", 2);

        await().until(() -> !received.isEmpty());
        ReceivedMessage m = received.peek();
        assertEquals(d.getId(), m.id());
        assertEquals(24, m.tag().length);
        assertEquals("hello", m.payloadUtf8());
        assertEquals("v", m.headers().get("k"));
        assertEquals(1_000, m.enqueuedAtMs());
        assertEquals(2_000, m.dueAtMs());
        assertEquals(3_000, m.deliveredAtMs());
        assertEquals(2, m.attempt());
    }

    @Test
    void confirmedAckCompletesOnAckReply() throws Exception {
        BlockingQueue<CompletableFuture<Void>> confirms = new LinkedBlockingQueue<>();
        client.subscribe("t", "g", FAST, (m, ctx) -> confirms.add(ctx.ackConfirmed()));
        FakeBroker.FakeStream stream = awaitStream(0);
        stream.deliver("t", "x", 1);

        CompletableFuture<Void> confirmed = confirms.poll(10, TimeUnit.SECONDS);
        confirmed.get(10, TimeUnit.SECONDS);
        assertTrue(stream.acks().get(0).getAck().getConfirm());
    }

    @Test
    void refusedAckFailsItsFutureAndTheStreamStaysOpen() throws Exception {
        BlockingQueue<CompletableFuture<Void>> confirms = new LinkedBlockingQueue<>();
        client.subscribe("t", "g", FAST, (m, ctx) -> confirms.add(ctx.ackConfirmed()));
        FakeBroker.FakeStream stream = awaitStream(0);
        stream.deliverForgotten("t", "x");

        CompletableFuture<Void> refused = confirms.poll(10, TimeUnit.SECONDS);
        ExecutionException e = assertThrows(ExecutionException.class, () -> refused.get(10, TimeUnit.SECONDS));
        assertInstanceOf(InvalidRequestException.class, e.getCause());
        assertEquals("unknown delivery tag", ((HourglassClientException) e.getCause()).serverMessage());

        stream.deliver("t", "y", 1);
        confirms.poll(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        assertEquals(1, broker.streams.size());
    }

    @Test
    void reconnectsAfterTheStreamFails() {
        List<String> payloads = new CopyOnWriteArrayList<>();
        Subscription sub = client.subscribe("t", "g", FAST, (m, ctx) -> {
            payloads.add(m.payloadUtf8());
            ctx.ack();
        });
        FakeBroker.FakeStream first = awaitStream(0);
        first.deliver("t", "before", 1);
        await().until(() -> first.acks().size() == 1);

        first.fail(Status.UNAVAILABLE.withDescription("server restarting"));
        FakeBroker.FakeStream second = awaitStream(1);
        assertEquals("g", second.received.get(0).getInit().getGroup());
        second.deliver("t", "after", 1);

        await().until(() -> second.acks().size() == 1);
        assertEquals(List.of("before", "after"), payloads);
        assertFalse(sub.terminated().isDone());
    }

    /**
     * While no server names a leader (an election), attempts go every 50 ms, not after the default
     * backoff of 100, 200, 250, 250... ms: eight attempts took 1 550 ms with it, here about 400
     * (1.4 s allowed on a busy machine).
     */
    @Test
    void whileNoServerNamesALeaderTheSubscriptionAsksAgainEvery50Ms() {
        broker.initFailure = Status.UNAVAILABLE.withDescription("no leader yet");
        long start = System.nanoTime();
        client.subscribe("t", "g", SubscribeOptions.DEFAULT, (m, ctx) -> ctx.ack());
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> broker.streams.size() >= 8);
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(ms < 1_400, "the eighth attempt came " + ms + " ms after the first");
    }

    @Test
    void ackOfADeliveryFromAnEndedStreamIsNotSentOnTheNewOne() throws Exception {
        CountDownLatch reconnected = new CountDownLatch(1);
        BlockingQueue<CompletableFuture<Void>> confirms = new LinkedBlockingQueue<>();
        client.subscribe("t", "g", FAST, (m, ctx) -> {
            if (m.payloadUtf8().equals("old")) {
                assertTrue(reconnected.await(10, TimeUnit.SECONDS));
                ctx.ack();
                confirms.add(ctx.ackConfirmed()); // ignored: already settled
            }
        });
        FakeBroker.FakeStream first = awaitStream(0);
        first.deliver("t", "old", 1);
        await().until(() -> first.sent.get() == 2);
        first.fail(Status.UNAVAILABLE);
        FakeBroker.FakeStream second = awaitStream(1);
        reconnected.countDown();

        ExecutionException e = assertThrows(ExecutionException.class,
                () -> confirms.poll(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2))
                .until(() -> second.acks().isEmpty() && first.acks().isEmpty());
    }

    @Test
    void confirmedAckOfAStaleDeliveryFails() throws Exception {
        CountDownLatch reconnected = new CountDownLatch(1);
        BlockingQueue<CompletableFuture<Void>> confirms = new LinkedBlockingQueue<>();
        client.subscribe("t", "g", FAST, (m, ctx) -> {
            assertTrue(reconnected.await(10, TimeUnit.SECONDS));
            confirms.add(ctx.ackConfirmed());
        });
        FakeBroker.FakeStream first = awaitStream(0);
        first.deliver("t", "old", 1);
        await().until(() -> first.sent.get() == 2);
        first.fail(Status.UNAVAILABLE);
        FakeBroker.FakeStream second = awaitStream(1);
        reconnected.countDown();

        ExecutionException e = assertThrows(ExecutionException.class,
                () -> confirms.poll(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS));
        assertInstanceOf(StaleDeliveryException.class, e.getCause());
        assertTrue(second.acks().isEmpty());
    }

    @Test
    void plainAcksMadeWhileDeliveriesWaitGoOutInOneFrame() {
        CountDownLatch release = new CountDownLatch(1);
        Subscription sub = client.subscribe("t", "g", FAST.withMaxBuffered(200), (m, ctx) -> {
            assertTrue(release.await(20, TimeUnit.SECONDS));
            ctx.ack();
        });
        FakeBroker.FakeStream stream = awaitStream(0);
        for (int i = 0; i < 100; i++) {
            stream.deliver("t", "p-" + i, 1);
        }
        // The handler holds the first; the other 99 wait in the client behind it.
        await().atMost(Duration.ofSeconds(10)).until(() -> sub.queuedDeliveries() == 99);
        release.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> stream.acks().size() == 100);
        assertEquals(1, stream.ackFrames.size(), () -> "100 ACKs made back to back took " + stream.ackFrames.size()
                + " frames");
        assertTrue(stream.delivered.isEmpty(), "every tag acknowledged");
    }

    @Test
    void anAckMadeOffTheHandlerThreadIsSentAtOnce() throws Exception {
        var held = new java.util.concurrent.ArrayBlockingQueue<DeliveryContext>(1);
        client.subscribe("t", "g", FAST, (m, ctx) -> held.add(ctx));
        FakeBroker.FakeStream stream = awaitStream(0);
        stream.deliver("t", "later", 1);
        DeliveryContext ctx = held.poll(10, TimeUnit.SECONDS);
        ctx.ack(); // the handler returned long ago; nothing would flush a buffered ACK
        await().atMost(Duration.ofSeconds(5)).until(() -> stream.acks().size() == 1);
    }

    @Test
    void aSlowHandlerLimitsWhatTheServerCanSend() {
        CountDownLatch release = new CountDownLatch(1);
        List<String> handled = new CopyOnWriteArrayList<>();
        client.subscribe("t", "g", FAST.withMaxBuffered(4), (m, ctx) -> {
            assertTrue(release.await(20, TimeUnit.SECONDS));
            handled.add(m.payloadUtf8());
            ctx.ack();
        });
        FakeBroker.FakeStream stream = awaitStream(0);
        for (int i = 0; i < 100; i++) {
            stream.deliver("t", "p-" + i, 1);
        }

        // 1 subscribed frame + 4 deliveries; the rest waits on the server until the handler runs.
        await().atMost(Duration.ofSeconds(5)).until(() -> stream.sent.get() >= 5);
        await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> stream.sent.get() <= 5);
        release.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> handled.size() == 100);
    }

    @Test
    void aRefusedInitEndsTheSubscription() {
        broker.initFailure = Status.INVALID_ARGUMENT.withDescription("bad topic name");
        Subscription sub = client.subscribe("t", "g", FAST, (m, ctx) -> { });

        ExecutionException e = assertThrows(ExecutionException.class,
                () -> sub.terminated().get(10, TimeUnit.SECONDS));
        assertInstanceOf(InvalidRequestException.class, e.getCause());
        assertEquals(1, broker.streams.size());
    }

    @Test
    void givesUpWhenNoServerAccepts() {
        try (HourglassClient lonely = HourglassClient.builder().servers("nobody-here:1")
                .channelFactory(FakeBroker.channels()).build()) {
            Subscription sub = lonely.subscribe("t", "g", FAST.withGiveUpAfter(Duration.ofMillis(300)),
                    (m, ctx) -> { });

            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> sub.terminated().get(10, TimeUnit.SECONDS));
            assertInstanceOf(UnavailableException.class, e.getCause());
        }
    }

    @Test
    void closeHalfClosesTheStream() throws Exception {
        Subscription sub = client.subscribe("t", "g", FAST, (m, ctx) -> { });
        FakeBroker.FakeStream stream = awaitStream(0);

        sub.close();

        assertTrue(stream.halfClosed);
        assertFalse(stream.cancelled);
        sub.terminated().get(1, TimeUnit.SECONDS);
        assertFalse(sub.isSubscribed());
    }

    @Test
    void aFailingHandlerNacksTheDelivery() {
        client.subscribe("t", "g", FAST, (m, ctx) -> {
            throw new IllegalStateException("boom");
        });
        FakeBroker.FakeStream stream = awaitStream(0);
        stream.deliver("t", "x", 1);

        await().until(() -> stream.nacks().size() == 1);
        assertTrue(stream.acks().isEmpty());
    }

    @Test
    void aSubscriberSentAroundDuringAFailoverRetriesAtTheElectionPaceNotTheDoublingBackoff() {
        SubscribeOptions o = SubscribeOptions.DEFAULT;
        long early = Duration.ofMillis(400).toNanos();
        assertEquals(Duration.ZERO, Subscription.reconnectWait(o, 1, true, false, false, early), "first redirect: at once");
        assertEquals(Duration.ZERO, Subscription.reconnectWait(o, 3, true, false, false, early),
                "a redirect after an attempt that was not redirected (a server that knew no leader yet): at once");
        // Redirected again (a server named the old leader, or the new one was not ready yet): 50 ms,
        // where the doubling backoff from 100 ms would wait 200, 400, 800 ms.
        for (int failures = 2; failures <= 5; failures++) {
            assertEquals(Subscription.ELECTION_RETRY, Subscription.reconnectWait(o, failures, true, true, false, early),
                    "attempt " + failures);
        }
        assertEquals(Subscription.ELECTION_RETRY, Subscription.reconnectWait(o, 4, false, true, true, early),
                "no leader named yet");
        long late = Subscription.ELECTION_WINDOW.toNanos() + 1;
        Duration backoff = Subscription.reconnectWait(o, 4, true, true, false, late);
        assertTrue(backoff.compareTo(Duration.ofMillis(500)) >= 0, "past the window the backoff doubles again: " + backoff);
    }
}
