package io.hourglass.core.rooms;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.ByteString;
import io.hourglass.core.UnavailableException;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.LimitsConfig;
import io.hourglass.core.config.RoomsConfig;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.testing.LocalReplicator;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The started engine: its own thread runs events and housekeeping on the system clock. */
@Timeout(30)
class RoomEngineThreadTest {
    @TempDir
    Path dir;

    /** A sink safe to read from the test thread. */
    static final class Recorder implements RoomSink {
        final List<RoomDelivery> deliveries = new CopyOnWriteArrayList<>();
        final List<String> events = new CopyOnWriteArrayList<>();

        List<String> payloads() {
            return deliveries.stream().map(d -> d.payload().toStringUtf8()).toList();
        }

        @Override
        public void deliver(RoomDelivery d) {
            deliveries.add(d);
        }

        @Override
        public void ejected(String room, EjectReason reason) {
            events.add(room + " " + reason);
        }

        @Override
        public void closed(String reason) {
            events.add("closed");
        }
    }

    @Test
    void theEngineThreadDeliversReleasesOnAcksAndEvictsOnItsOwn() throws Exception {
        Clock clock = Clock.systemUTC();
        RoomsConfig config = new RoomsConfig(Duration.ofSeconds(1), Duration.ofMillis(50), Duration.ofSeconds(1));
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            StateApplier applier = new StateApplier(store, new RoomApplier(store));
            RoomEngine engine = new RoomEngine(config, LimitsConfig.DEFAULTS, store, new LocalReplicator(applier, clock),
                    clock);
            applier.addListener(engine);
            try (engine) {
                engine.start();
                engine.setLeading(true, 1);
                Recorder a = new Recorder();
                Recorder b = new Recorder();
                ClientId ida = engine.connect(a).get(5, TimeUnit.SECONDS);
                ClientId idb = engine.connect(b, Duration.ofSeconds(1)).get(5, TimeUnit.SECONDS);
                engine.subscribe(ida, "r", SubscriptionMode.SYNC).get(5, TimeUnit.SECONDS);
                engine.subscribe(idb, "r", SubscriptionMode.SYNC).get(5, TimeUnit.SECONDS);
                engine.send("r", 0, ByteString.copyFromUtf8("m1"), null).get(5, TimeUnit.SECONDS);
                engine.send("r", 0, ByteString.copyFromUtf8("m2"), null).get(5, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(5)).until(() -> a.payloads().equals(List.of("m1")));
                String m1 = a.deliveries.get(0).messageId();
                assertEquals(AckOutcome.ACKED, engine.ack(ida, "r", m1).get(5, TimeUnit.SECONDS));
                // B never acks nor pings: evicted after its 1s timeout, which releases m2 to A
                await().atMost(Duration.ofSeconds(5)).until(() -> a.payloads().equals(List.of("m1", "m2")));
                assertEquals(List.of("r TIMEOUT", "closed"), b.events);
            }
            CompletionException e = assertThrows(CompletionException.class,
                    () -> engine.ping(ClientId.random()).join());
            assertInstanceOf(io.hourglass.core.NotLeaderException.class, e.getCause());
        }
    }

    @Test
    void callsAfterCloseFailInsteadOfHanging() {
        Clock clock = Clock.systemUTC();
        try (EventStore store = EventStore.open(dir.resolve("db"))) {
            StateApplier applier = new StateApplier(store, new RoomApplier(store));
            RoomEngine engine = new RoomEngine(RoomsConfig.DEFAULTS, LimitsConfig.DEFAULTS, store,
                    new LocalReplicator(applier, clock), clock);
            engine.start();
            engine.setLeading(true, 1);
            engine.close();
            var loop = new io.hourglass.core.loop.EventLoop("t", clock, io.hourglass.core.loop.EventLoop.Mode.QUEUED);
            loop.close();
            CompletionException e = assertThrows(CompletionException.class, () -> loop.call(() -> 1).join());
            assertInstanceOf(UnavailableException.class, e.getCause());
        }
    }
}
