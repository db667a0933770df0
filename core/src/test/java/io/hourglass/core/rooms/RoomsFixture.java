package io.hourglass.core.rooms;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.LimitsConfig;
import io.hourglass.core.config.RoomsConfig;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.testing.LocalReplicator;
import io.hourglass.core.testing.ManualClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A rooms engine over a real store with in-memory replication and a manual clock, driven on the
 * test's thread: every helper runs the engine's queued events before it returns. T = 2s, tick = 500ms.
 */
final class RoomsFixture implements AutoCloseable {
    static final Duration T = Duration.ofSeconds(2);
    static final Duration TICK = Duration.ofMillis(500);
    static final RoomsConfig CONFIG = new RoomsConfig(T, TICK, Duration.ofSeconds(10));

    final ManualClock clock = new ManualClock(1_000_000);
    final EventStore store;
    final StateApplier applier;
    final LocalReplicator replicator;
    private final RoomsConfig config;
    RoomEngine engine;
    private long lastTickMs = clock.millis();

    RoomsFixture(Path dir) {
        this(dir, CONFIG);
    }

    RoomsFixture(Path dir, RoomsConfig config) {
        this.config = config;
        store = EventStore.open(dir.resolve("db"));
        applier = new StateApplier(store, new RoomApplier(store));
        replicator = new LocalReplicator(applier, clock);
        engine = newEngine();
    }

    /**
     * A new engine over the same store that starts leading in the next term: what a new leader does
     * after a failover.
     */
    RoomEngine failover() {
        engine.setLeading(false, replicator.term());
        run();
        engine.close();
        replicator.newTerm();
        engine = newEngine();
        return engine;
    }

    /**
     * The same engine stops leading and then leads again in the same term: a leader cut off from the
     * cluster and back in touch before anyone else was elected.
     */
    void cutOffAndBack() {
        engine.setLeading(false, replicator.term());
        run();
        engine.setLeading(true, replicator.term());
        run();
    }

    private RoomEngine newEngine() {
        RoomEngine e = new RoomEngine(config, LimitsConfig.DEFAULTS, store, replicator, clock);
        applier.addListener(e);
        e.setLeading(true, replicator.term());
        e.runQueued();
        return e;
    }

    void run() {
        engine.runQueued();
    }

    /** Runs the engine until the future is answered. */
    <T> T await(CompletableFuture<T> f) {
        run();
        return f.join();
    }

    TestClient client(String name) {
        return client(name, T);
    }

    TestClient client(String name, Duration timeout) {
        TestClient c = new TestClient(name, this);
        c.id = await(engine.connect(c, timeout));
        return c;
    }

    /** A client subscribed to {@code room}. */
    TestClient join(String name, String room, SubscriptionMode mode) {
        TestClient c = client(name);
        c.subscribe(room, mode);
        return c;
    }

    /** A client subscribed to {@code room} under a session id, as the client library subscribes. */
    TestClient join(String name, String room, SubscriptionMode mode, String session) {
        TestClient c = client(name).session(session);
        c.subscribe(room, mode);
        return c;
    }

    String send(String room, int priority, String payload) {
        return await(engine.send(room, priority, ByteString.copyFromUtf8(payload), null));
    }

    List<String> sendAll(String room, int priority, String... payloads) {
        List<String> ids = new ArrayList<>();
        for (String p : payloads) {
            ids.add(send(room, priority, p));
        }
        return ids;
    }

    RoomSnapshot state(String room) {
        return await(engine.state(room));
    }

    List<String> peek(String room, int offset, int limit) {
        return await(engine.peek(room, offset, limit)).stream().map(m -> m.getPayload().toStringUtf8()).toList();
    }

    /** Moves the clock in 100ms steps, running housekeeping every {@link #TICK} as the engine thread would. */
    void advance(Duration d) {
        long end = clock.millis() + d.toMillis();
        while (clock.millis() < end) {
            clock.advance(Duration.ofMillis(Math.min(100, end - clock.millis())));
            if (clock.millis() - lastTickMs >= TICK.toMillis()) {
                lastTickMs = clock.millis();
                engine.tick();
            }
            run();
        }
    }

    @Override
    public void close() {
        engine.close();
        store.close();
    }

    /** A client that records what its sink is told; optionally acks every ackable delivery at once. */
    static final class TestClient implements RoomSink {
        final String name;
        private final RoomsFixture f;
        ClientId id;
        /** Sent with every subscribe; null: none, as an older client. */
        SessionId session;
        boolean autoAck;
        final List<RoomDelivery> deliveries = new ArrayList<>();
        final List<String> events = new ArrayList<>();
        String closedReason;
        private int seen;

        TestClient(String name, RoomsFixture f) {
            this.name = name;
            this.f = f;
        }

        TestClient autoAck() {
            autoAck = true;
            return this;
        }

        TestClient session(String value) {
            session = new SessionId(value);
            return this;
        }

        SubscribeOutcome subscribe(String room, SubscriptionMode mode) {
            return subscribe(room, mode, null);
        }

        /** Subscribes saying it holds {@code heldMessageId} (null or empty: nothing), with its session id. */
        SubscribeOutcome subscribe(String room, SubscriptionMode mode, String heldMessageId) {
            return f.await(f.engine.subscribe(id, room, mode, heldMessageId, session));
        }

        UnsubscribeOutcome unsubscribe(String room) {
            return f.await(f.engine.unsubscribe(id, room));
        }

        AckOutcome ack(String room, String messageId) {
            return f.await(f.engine.ack(id, room, messageId));
        }

        /** Acks the last ackable delivery. */
        AckOutcome ackLast() {
            RoomDelivery d = last();
            return ack(d.room(), d.messageId());
        }

        PingOutcome ping() {
            return f.await(f.engine.ping(id));
        }

        RoomDelivery last() {
            return deliveries.get(deliveries.size() - 1);
        }

        /** Payloads delivered since the previous call. */
        List<String> fresh() {
            List<String> out = deliveries.subList(seen, deliveries.size()).stream()
                    .map(d -> d.payload().toStringUtf8()).toList();
            seen = deliveries.size();
            return out;
        }

        List<String> payloads() {
            return deliveries.stream().map(d -> d.payload().toStringUtf8()).toList();
        }

        @Override
        public void deliver(RoomDelivery d) {
            deliveries.add(d);
            if (autoAck && d.ackable()) {
                f.engine.ack(id, d.room(), d.messageId());
            }
        }

        @Override
        public void ejected(String room, EjectReason reason) {
            events.add("ejected " + room + " " + reason);
        }

        @Override
        public void closed(String reason) {
            closedReason = reason;
        }

        @Override
        public String toString() {
            return name;
        }
    }
}
