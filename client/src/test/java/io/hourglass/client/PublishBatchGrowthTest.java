package io.hourglass.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.PublishResponse;
import io.hourglass.api.v1.PublishedMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A batch whose linger runs out while every in-flight slot is taken keeps growing until a slot
 * frees, instead of being sealed small and queued: at 1 000 msg/s into slow commits the client
 * used to send ~500 tiny requests a second into 8 slots and fall behind without bound.
 */
@Timeout(30)
final class PublishBatchGrowthTest {
    private record Sent(PublishRequest request, CompletableFuture<PublishResponse> reply, long atNanos) {
    }

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final List<Sent> sent = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    /** No batch counts as stuck: the growth rule alone. */
    private PublishBatcher batcher(int maxInFlight) {
        return batcher(maxInFlight, Long.MAX_VALUE);
    }

    private PublishBatcher batcher(int maxInFlight, long stuckNanos) {
        return new PublishBatcher(new PublishConfig(500, 1 << 20, Duration.ofMillis(1), maxInFlight,
                Duration.ofSeconds(10)), request -> {
                    CompletableFuture<PublishResponse> reply = new CompletableFuture<>();
                    sent.add(new Sent(request, reply, System.nanoTime()));
                    return reply;
                }, timer, stuckNanos);
    }

    /**
     * A failover: nothing in flight comes back. Once every in-flight batch has waited the stuck time,
     * one more goes out (so that it waits on the server for the new leader with the others), and only one.
     */
    @Test
    void aLimitOfOneNeverLetsASecondBatchOutHoweverLongTheFirstWaits() {
        PublishBatcher batcher = batcher(1, java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(50));
        batcher.add(message(0));
        await().until(() -> sent.size() == 1);
        batcher.add(message(1));
        await("one request at a time keeps the order").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(3))
                .until(() -> sent.size() == 1);
        answer(sent.get(0));
        await().until(() -> sent.size() == 2);
    }

    @Test
    void oneBatchMoreGoesOutWhenEveryInFlightOneIsStuckAndOnlyOne() {
        PublishBatcher batcher = batcher(2, java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(200));
        batcher.add(message(0));
        await().until(() -> sent.size() == 1);
        batcher.add(message(1));
        await().until(() -> sent.size() == 2);
        batcher.add(message(2));
        await("the third batch, past the limit of 2, once both waited 200 ms").atMost(Duration.ofSeconds(5))
                .until(() -> sent.size() == 3);
        assertTrue(sent.get(2).atNanos() - sent.get(1).atNanos() >= java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(200),
                "not before the in-flight batches count as stuck");
        for (int i = 3; i < 50; i++) {
            batcher.add(message(i));
        }
        await("no fourth while three are out").during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(3))
                .until(() -> sent.size() == 3);
        answer(sent.get(0));
        await().until(() -> sent.size() == 4);
        assertEquals(47, sent.get(3).request().getMessagesCount(), "the rest, grown while it waited");
    }

    private static PublishMessage message(int i) {
        return PublishMessage.newBuilder().setTopic("t").setPayload(ByteString.copyFromUtf8("m-" + i)).build();
    }

    private static void answer(Sent s) {
        PublishResponse.Builder r = PublishResponse.newBuilder();
        for (int i = 0; i < s.request().getMessagesCount(); i++) {
            r.addMessages(PublishedMessage.newBuilder().setId(String.format("%048x", i)).setEnqueuedAtMs(1).setDueAtMs(1));
        }
        s.reply().complete(r.build());
    }

    @Test
    void messagesThatArriveWhileEverySlotIsBusyGoOutAsOneRequestWhenASlotFrees() {
        PublishBatcher batcher = batcher(1);
        List<CompletableFuture<PublishResult>> results = new ArrayList<>();
        results.add(batcher.add(message(0)));
        await("the first message is sent after its linger").until(() -> sent.size() == 1);

        results.add(batcher.add(message(1)));
        await("the next batch outlived its linger with no slot free").until(batcher::openBatchWaitsForSlot);
        for (int i = 2; i < 300; i++) {
            results.add(batcher.add(message(i)));
        }
        assertEquals(1, sent.size(), "nothing else goes out while the slot is busy");

        answer(sent.get(0));
        await("the waiting batch goes out once the slot frees").until(() -> sent.size() == 2);
        assertEquals(299, sent.get(1).request().getMessagesCount(), "one request, grown while it waited");
        answer(sent.get(1));
        results.forEach(CompletableFuture::join);
        assertEquals(2, sent.size());
    }

    @Test
    void aGrowingBatchIsStillCutAtTheSizeLimit() {
        PublishBatcher batcher = batcher(1);
        batcher.add(message(0));
        await().until(() -> sent.size() == 1);
        batcher.add(message(1));
        await().until(batcher::openBatchWaitsForSlot);
        for (int i = 2; i < 1_200; i++) {
            batcher.add(message(i));
        }
        answer(sent.get(0));
        await().until(() -> sent.size() == 2);
        assertEquals(500, sent.get(1).request().getMessagesCount(), "full batches are sealed as before");
        answer(sent.get(1));
        await().until(() -> sent.size() == 3);
        assertEquals(500, sent.get(2).request().getMessagesCount());
        answer(sent.get(2));
        await().until(() -> sent.size() == 4);
        assertEquals(199, sent.get(3).request().getMessagesCount(), "the rest, once its turn comes");
        answer(sent.get(3));
    }
}
