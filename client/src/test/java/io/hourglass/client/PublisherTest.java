package io.hourglass.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.hourglass.api.v1.PublishRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PublisherTest {
    private FakeBroker broker;
    private final List<HourglassClient> clients = new ArrayList<>();

    @BeforeEach
    void startBroker() throws Exception {
        broker = new FakeBroker();
    }

    @AfterEach
    void stop() {
        clients.forEach(HourglassClient::close);
        broker.close();
    }

    private HourglassClient.Builder builder(String... servers) {
        return HourglassClient.builder()
                .servers(servers.length == 0 ? new String[] {broker.address()} : servers)
                .channelFactory(FakeBroker.channels())
                .retryPolicy(new RetryPolicy(Duration.ofMillis(5), Duration.ofMillis(50), Duration.ofSeconds(10)));
    }

    private HourglassClient client(HourglassClient.Builder builder) {
        HourglassClient client = builder.build();
        clients.add(client);
        return client;
    }

    @Test
    void concurrentAsyncPublishesShareRequests() {
        HourglassClient client = client(builder().maxBatchMessages(100).linger(Duration.ofMillis(50)));
        // Held at the broker, as on a real one that takes a while to commit: the in-process broker
        // answers so fast that a message would now and then find nothing outstanding and go out alone.
        broker.publishGate = new java.util.concurrent.CountDownLatch(1);
        List<CompletableFuture<PublishResult>> futures = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            futures.add(client.publishAsync(Message.of("t", "m-" + i)));
        }
        broker.publishGate.countDown();
        List<PublishResult> results = futures.stream().map(CompletableFuture::join).toList();

        assertEquals(1000, new HashSet<>(results.stream().map(PublishResult::id).toList()).size());
        assertEquals(1000, broker.publishedMessageCount());
        // the first alone (nothing was outstanding), the 999 behind it in requests of up to 100 (and a
        // partial one whenever the 50 ms linger runs out mid-loop on a slow machine)
        assertTrue(broker.publishRequests.size() <= 20, "requests: " + broker.publishRequests.size());
        assertTrue(broker.publishRequests.stream().allMatch(r -> r.getMessagesCount() <= 100));
        assertEquals(1000, new HashSet<>(payloadsAtServer()).size());
    }

    @Test
    void oneBatchInFlightKeepsPublishOrder() {
        HourglassClient client = client(builder().maxBatchMessages(10).maxInFlightBatches(1));
        List<CompletableFuture<PublishResult>> futures = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            futures.add(client.publishAsync(Message.of("t", "m-" + i)));
        }
        futures.forEach(CompletableFuture::join);

        List<String> payloads = payloadsAtServer();
        for (int i = 0; i < 200; i++) {
            assertEquals("m-" + i, payloads.get(i));
        }
    }

    private List<String> payloadsAtServer() {
        return broker.publishRequests.stream().flatMap(r -> r.getMessagesList().stream())
                .map(m -> m.getPayload().toStringUtf8()).toList();
    }

    @Test
    void lingerSendsAPartialBatch() {
        HourglassClient client = client(builder().linger(Duration.ofMillis(20)));
        PublishResult result = client.publishAsync(Message.builder("t").payload("x")
                .delay(Duration.ofSeconds(5)).header("h", "1").build()).join();

        assertEquals(6_000, result.dueAtMs());
        assertEquals(1, broker.publishRequests.size());
        PublishRequest request = broker.publishRequests.get(0);
        assertEquals(5_000, request.getMessages(0).getDelayMs());
        assertEquals("1", request.getMessages(0).getHeadersOrThrow("h"));
    }

    @Test
    void aMessageThatFindsNothingOutstandingGoesOutWithoutItsLinger() {
        HourglassClient client = client(builder().linger(Duration.ofSeconds(30)));
        CompletableFuture<PublishResult> lone = client.publishAsync(Message.of("t", "x"));

        await("a lone message is sent at once, not after its 30 s linger").atMost(Duration.ofSeconds(5))
                .until(lone::isDone);
        assertEquals(1, broker.publishRequests.size());
    }

    @Test
    void messagesBehindAnOutstandingRequestGatherForTheLinger() {
        HourglassClient client = client(builder().linger(Duration.ofMillis(200)));
        broker.publishGate = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<PublishResult> first = client.publishAsync(Message.of("t", "0"));
        await().atMost(Duration.ofSeconds(5)).until(() -> broker.publishRequests.size() == 1);
        List<CompletableFuture<PublishResult>> behind = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            behind.add(client.publishAsync(Message.of("t", "m-" + i)));
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> broker.publishRequests.size() == 2);
        broker.publishGate.countDown();
        first.join();
        behind.forEach(CompletableFuture::join);

        assertEquals(1, broker.publishRequests.get(0).getMessagesCount());
        assertEquals(5, broker.publishRequests.get(1).getMessagesCount(), "the five behind the first share one request");
        assertEquals(2, broker.publishRequests.size());
    }

    @Test
    void batchesAreCutAtMaxBytes() {
        HourglassClient client = client(builder().maxBatchBytes(1000).linger(Duration.ofMillis(50)));
        String payload = "x".repeat(300);
        List<CompletableFuture<PublishResult>> futures = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            futures.add(client.publishAsync(Message.of("t", payload)));
        }
        futures.forEach(CompletableFuture::join);

        assertTrue(broker.publishRequests.stream().allMatch(r -> r.getSerializedSize() <= 1000));
        assertTrue(broker.publishRequests.size() >= 4);
    }

    @Test
    void publishBatchKeepsOrderAcrossRequests() {
        HourglassClient client = client(builder().maxBatchMessages(3));
        List<Message> messages = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            messages.add(Message.of("t", "m-" + i));
        }
        List<PublishResult> results = client.publishBatch(messages);

        assertEquals(10, results.size());
        assertEquals(4, broker.publishRequests.size());
        List<String> sentIds = new ArrayList<>();
        results.forEach(r -> sentIds.add(r.id()));
        assertEquals(10, new HashSet<>(sentIds).size());
    }

    @Test
    void retriesUnavailableThenSucceeds() {
        broker.publishFailures.add(Status.UNAVAILABLE.withDescription("no leader yet"));
        broker.publishFailures.add(Status.UNAVAILABLE.withDescription("not the leader"));
        HourglassClient client = client(builder());

        PublishResult result = client.publish(Message.of("t", "x"));

        assertEquals(48, result.id().length());
        assertEquals(3, broker.publishRequests.size());
    }

    @Test
    void aRetryWaitingOutItsBackoffGoesAtOnceWhenAnotherPublishSucceeds() throws Exception {
        // A long backoff, as one grows during an election: without the wake-up the first publish
        // would wait its 5 s out after the broker serves again.
        HourglassClient client = client(builder().retryPolicy(
                new RetryPolicy(Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30))));
        broker.validator = m -> Status.UNAVAILABLE.withDescription("no leader yet");
        CompletableFuture<PublishResult> first = client.publishAsync(Message.of("t", "first"));
        await().atMost(Duration.ofSeconds(10)).until(() -> broker.publishRequests.size() == 1);
        broker.validator = m -> null; // a leader again

        client.publish(Message.of("t", "second"));
        long served = System.nanoTime();
        first.get(4, TimeUnit.SECONDS);
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - served);
        assertTrue(waitedMs < 2_000, "the waiting retry went when the second publish succeeded, not after its "
                + "5 s backoff: " + waitedMs + " ms");
        assertEquals(3, broker.publishRequests.size(), "first's failed attempt, second, first's retry");
    }

    @Test
    void failsOverToTheNextServer() throws Exception {
        try (FakeBroker second = new FakeBroker()) {
            broker.validator = m -> Status.UNAVAILABLE.withDescription("not the leader");
            HourglassClient client = client(builder(broker.address(), second.address()));

            client.publish(Message.of("t", "x"));
            client.publish(Message.of("t", "y"));

            assertEquals(1, broker.publishRequests.size());
            assertEquals(2, second.publishRequests.size());
        }
    }

    @Test
    void movesOffAServerThatStopsAnsweringWellBeforeTheCallTimeout() throws Exception {
        try (FakeBroker second = new FakeBroker()) {
            broker.publishesHang = true;
            broker.questionsHang = true; // a paused process: the connection is up, nothing answers
            HourglassClient client = client(builder(broker.address(), second.address())
                    .callTimeout(Duration.ofSeconds(30)).stallTimeout(Duration.ofMillis(200)));

            long start = System.nanoTime();
            client.publish(Message.of("t", "x"));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertTrue(ms < 5_000, "moved after " + ms + " ms");
            assertEquals(1, broker.publishRequests.size());
            assertEquals(1, second.publishRequests.size());
            assertEquals(broker.publishRequests.get(0), second.publishRequests.get(0), "the same request, dedup and all");
        }
    }

    @Test
    void leavesACallOnAServerThatAnswersButIsSlowToCommit() throws Exception {
        try (FakeBroker second = new FakeBroker()) {
            broker.publishesHang = true; // an election, a slow disk: the server still answers questions
            HourglassClient client = client(builder(broker.address(), second.address())
                    .callTimeout(Duration.ofSeconds(30)).stallTimeout(Duration.ofMillis(100)));

            client.publishAsync(Message.of("t", "x"));
            client.flush();

            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
                    .until(() -> broker.publishRequests.size() == 1 && second.publishRequests.isEmpty());
        }
    }

    @Test
    void neverRetriesAnInvalidRequest() {
        HourglassClient client = client(builder());

        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> client.publish(Message.of("bad", "x")));

        assertEquals("topic 'bad' is not allowed", e.serverMessage());
        assertTrue(e.getMessage().contains("topic 'bad' is not allowed"));
        assertEquals(1, broker.publishRequests.size());
    }

    @Test
    void oneInvalidMessageFailsOnlyItselfInABatch() {
        HourglassClient client = client(builder().linger(Duration.ofMillis(100)));
        broker.publishGate = new java.util.concurrent.CountDownLatch(1);
        CompletableFuture<PublishResult> first = client.publishAsync(Message.of("t", "0")); // out at once
        await().atMost(Duration.ofSeconds(5)).until(() -> broker.publishRequests.size() == 1);
        CompletableFuture<PublishResult> good1 = client.publishAsync(Message.of("t", "1"));
        CompletableFuture<PublishResult> bad = client.publishAsync(Message.of("bad", "2"));
        CompletableFuture<PublishResult> good2 = client.publishAsync(Message.of("t", "3"));

        await().atMost(Duration.ofSeconds(5)).until(() -> broker.publishRequests.size() == 2);
        broker.publishGate.countDown();
        first.join();
        good1.join();
        good2.join();
        CompletionException e = assertThrows(CompletionException.class, bad::join);
        assertInstanceOf(InvalidRequestException.class, e.getCause());
        assertEquals(3, broker.publishRequests.get(1).getMessagesCount(), "the three behind the first share a request");
    }

    @Test
    void givesUpAfterTheRetryDeadline() {
        broker.validator = m -> Status.UNAVAILABLE.withDescription("no leader yet");
        HourglassClient client = client(builder().retryDeadline(Duration.ofMillis(300)));
        long start = System.nanoTime();

        UnavailableException e = assertThrows(UnavailableException.class,
                () -> client.publish(Message.of("t", "x")));

        assertTrue(e.getMessage().contains("no leader yet"), e.getMessage());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
        assertTrue(broker.publishRequests.size() > 1);
    }

    @Test
    void unreachableServerIsUnavailable() {
        HourglassClient client = client(builder("nobody-listens-here:1").retryDeadline(Duration.ofMillis(200)));

        assertThrows(UnavailableException.class, () -> client.publish(Message.of("t", "x")));
    }

    @Test
    void closeFlushesPendingAndRefusesNewMessages() {
        HourglassClient client = builder().linger(Duration.ofSeconds(30)).build();
        CompletableFuture<PublishResult> pending = client.publishAsync(Message.of("t", "x"));

        client.close();

        assertTrue(pending.isDone() && !pending.isCompletedExceptionally());
        CompletionException e = assertThrows(CompletionException.class,
                () -> client.publishAsync(Message.of("t", "y")).join());
        assertInstanceOf(HourglassClientException.class, e.getCause());
    }

    @Test
    void invalidMessagesAreRefusedBeforeSending() {
        assertThrows(IllegalArgumentException.class, () -> Message.of(" ", "x"));
        assertThrows(IllegalArgumentException.class,
                () -> Message.builder("t").delay(Duration.ofSeconds(-1)).build());
        assertThrows(IllegalArgumentException.class, () -> HourglassClient.builder().servers("localhost"));
    }
}
