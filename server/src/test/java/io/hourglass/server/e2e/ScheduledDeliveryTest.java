package io.hourglass.server.e2e;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.Subscription;
import io.hourglass.core.storage.EventKey;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scheduled queue end to end: a real node (Ratis over loopback, RocksDB on disk, gRPC),
 * driven through {@link HourglassClient}. The in-flight timeout and the TTL sweep are shortened so
 * that redelivery and expiry happen within seconds; everything else runs at its defaults.
 */
@Timeout(180)
class ScheduledDeliveryTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    @TempDir
    static Path dir;
    private static TestNode node;
    private static HourglassClient client;
    private final List<Subscription> subscriptions = new ArrayList<>();

    @BeforeAll
    static void start() {
        node = TestNode.start(dir, Map.of("delivery.inFlightTimeout", "1s", "delivery.ttlSweepInterval", "200ms"));
        client = HourglassClient.builder().servers(node.target()).build();
    }

    @AfterAll
    static void stop() {
        client.close();
        node.close();
    }

    @AfterEach
    void closeSubscriptions() {
        subscriptions.forEach(Subscription::close);
    }

    private Recorder subscribe(String topic, String group, Recorder r) {
        subscriptions.add(client.subscribe(topic, group, r));
        return r;
    }

    @Test
    void delayedMessagesArriveNotBeforeTheyAreDue() {
        Recorder r = subscribe("e2e-delay", "g", Recorder.acking());
        List<PublishResult> published = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            published.add(client.publish(Message.builder("e2e-delay").payload("m" + i)
                    .delay(Duration.ofMillis(100L * (i % 10))).build()));
        }
        await().atMost(WAIT).until(() -> r.count() >= 20);
        for (Recorder.Received got : r.received()) {
            var m = got.message();
            assertTrue(m.deliveredAtMs() >= m.dueAtMs(), "dispatched at " + m.deliveredAtMs() + ", due " + m.dueAtMs());
            assertTrue(got.receivedAtMs() >= m.dueAtMs(), "received at " + got.receivedAtMs() + ", due " + m.dueAtMs());
        }
        Set<String> ids = new HashSet<>();
        r.received().forEach(x -> ids.add(x.message().id()));
        assertEquals(published.stream().map(PublishResult::id).collect(java.util.stream.Collectors.toSet()), ids);
    }

    @Test
    void twoGroupsAndAUniversalConsumerEachGetTheirCopies() {
        Recorder a1 = subscribe("e2e-fanout", "a", Recorder.acking());
        Recorder a2 = subscribe("e2e-fanout", "a", Recorder.acking());
        Recorder b = subscribe("e2e-fanout", "b", Recorder.acking());
        Recorder u = subscribe("e2e-fanout", "", Recorder.acking());
        await().atMost(WAIT).until(() -> subscriptions.stream().allMatch(Subscription::isSubscribed));
        List<Message> batch = IntStream.range(0, 50).mapToObj(i -> Message.of("e2e-fanout", "m" + i)).toList();
        client.publishBatch(batch);
        await().atMost(WAIT).until(() -> a1.count() + a2.count() >= 50 && b.count() >= 50 && u.count() >= 50);
        Set<String> all = IntStream.range(0, 50).mapToObj(i -> "m" + i).collect(java.util.stream.Collectors.toSet());
        Set<String> groupA = new HashSet<>(a1.payloads());
        groupA.addAll(a2.payloads());
        assertEquals(all, groupA);
        assertTrue(a1.count() > 0 && a2.count() > 0, "both members of group a took a share");
        assertEquals(all, new HashSet<>(b.payloads()));
        assertEquals(all, new HashSet<>(u.payloads()));
    }

    @Test
    void nackedMessageComesBackAtOnceWithTheNextAttemptNumber() {
        Recorder r = subscribe("e2e-nack", "g", new Recorder((m, ctx) -> {
            if (m.attempt() == 1) {
                ctx.nack();
            } else {
                ctx.ack();
            }
        }));
        client.publish(Message.of("e2e-nack", "retry me"));
        await().atMost(WAIT).until(() -> r.count() >= 2);
        var first = r.received().get(0).message();
        var second = r.received().get(1).message();
        assertEquals(first.id(), second.id());
        assertEquals(List.of(1, 2), List.of(first.attempt(), second.attempt()));
        assertTrue(second.deliveredAtMs() - first.deliveredAtMs() < 1_000,
                "redelivered before the 1 s in-flight timeout could have fired");
    }

    @Test
    void unacknowledgedMessageIsRedeliveredAfterTheInFlightTimeout() {
        Map<String, Integer> seen = new ConcurrentHashMap<>();
        Recorder r = subscribe("e2e-timeout", "g", new Recorder((m, ctx) -> {
            if (seen.merge(m.id(), 1, Integer::sum) > 1) {
                ctx.ack();
            }
        }));
        client.publish(Message.of("e2e-timeout", "slow consumer"));
        await().atMost(WAIT).until(() -> r.count() >= 2);
        var first = r.received().get(0).message();
        var second = r.received().get(1).message();
        assertEquals(2, second.attempt());
        assertTrue(second.deliveredAtMs() - first.deliveredAtMs() >= 1_000, "not before the in-flight timeout");
    }

    @Test
    void expiredMessagesAreNeverDeliveredAndAreRemoved() {
        PublishResult gone = client.publish(Message.builder("e2e-ttl").payload("expires").ttl(Duration.ofMillis(300)).build());
        EventKey key = EventKey.fromHex(gone.id());
        await().atMost(WAIT).until(() -> node.node().store().queue().message(key).isEmpty());
        Recorder r = subscribe("e2e-ttl", "g", Recorder.acking());
        client.publish(Message.of("e2e-ttl", "lasting"));
        await().atMost(WAIT).until(() -> r.count() >= 1);
        assertEquals(List.of("lasting"), r.payloads());
    }
}
