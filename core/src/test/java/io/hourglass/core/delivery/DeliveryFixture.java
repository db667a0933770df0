package io.hourglass.core.delivery;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.testing.LocalReplicator;
import io.hourglass.core.testing.ManualClock;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** A delivery engine over a real store with in-memory replication; closes both. */
final class DeliveryFixture implements AutoCloseable {
    final ManualClock manualClock = new ManualClock(1_000_000);
    final EventStore store;
    final StateApplier applier;
    final LocalReplicator replicator;
    final DeliveryEngine engine;

    DeliveryFixture(Path dir, DeliveryConfig config) {
        this(dir, config, null);
    }

    DeliveryFixture(Path dir, DeliveryConfig config, Clock clock) {
        Clock c = clock == null ? manualClock : clock;
        store = EventStore.open(dir.resolve("db"));
        applier = new StateApplier(store);
        replicator = new LocalReplicator(applier, c);
        engine = new DeliveryEngine(config, store, replicator, c);
        applier.addListener(engine);
        engine.setLeading(true);
    }

    static DeliveryConfig config(int queueSize, int deleteMaxKeys) {
        DeliveryConfig d = DeliveryConfig.DEFAULTS;
        return new DeliveryConfig(d.dispatchPollInterval(), queueSize, d.inFlightTimeout(), d.deleteBatchInterval(),
                deleteMaxKeys, d.ttlSweepInterval());
    }

    List<EventKey> publish(String topic, long delayMs, long ttlMs, String... payloads) {
        PutCmd.Builder put = PutCmd.newBuilder();
        for (String p : payloads) {
            put.addMessages(NewMessage.newBuilder().setTopic(topic).setPayload(ByteString.copyFromUtf8(p))
                    .setDelayMs(delayMs).setTtlMs(ttlMs));
        }
        return replicator.propose(Command.newBuilder().setPut(put).build()).join().getPublishedKeysList().stream()
                .map(b -> EventKey.fromBytes(b.toByteArray())).toList();
    }

    TestConsumer subscribe(String topic, String group) {
        return subscribe(topic, group, 0);
    }

    TestConsumer subscribe(String topic, String group, int maxUnacked) {
        TestConsumer sink = new TestConsumer();
        sink.consumer = engine.subscribe(topic, group, sink, maxUnacked).join();
        return sink;
    }

    void advance(Duration d) {
        manualClock.advance(d);
    }

    @Override
    public void close() {
        engine.close();
        store.close();
    }

    /** A consumer whose buffer the test drains by hand. */
    static final class TestConsumer implements Consumer.Sink {
        Consumer consumer;
        final AtomicInteger signals = new AtomicInteger();
        volatile String closedReason;

        List<Delivery> drain() {
            List<Delivery> out = new ArrayList<>();
            for (Delivery d = consumer.poll(); d != null; d = consumer.poll()) {
                out.add(d);
            }
            return out;
        }

        List<String> payloads() {
            return drain().stream().map(d -> d.message().getPayload().toStringUtf8()).toList();
        }

        @Override
        public void deliveriesAvailable() {
            signals.incrementAndGet();
        }

        @Override
        public void closed(String reason) {
            closedReason = reason;
        }
    }
}
