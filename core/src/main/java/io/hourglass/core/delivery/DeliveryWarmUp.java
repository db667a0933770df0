package io.hourglass.core.delivery;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.DeliveryConfig;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.TermIndex;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs, once at start, the delivery engine's leader side over a throwaway store, so that a node's
 * first leadership does not wait for the JVM to load and interpret it. Measured with kill -9 of the
 * leader under load (2 cores, 3 nodes): a consumer's Subscribe took 200-730 ms to be registered on a
 * node leading for the first time — the new leader's first pass and first registration ran
 * interpreted, on a machine busy with the failover — against 20-30 ms on a node that had led before.
 *
 * <p>A group consumer and a universal one take {@link #MESSAGES} messages published in a few
 * entries; the group ACKs most of them in batches, one by one and NACKs a few; the deletions are
 * flushed. Commands go through an in-memory replicator that stamps and applies each at once on this
 * thread (nothing leaves the JVM; the node's own store and engine are not touched). Then the engine
 * and the store are closed and the directory deleted. A failure or an overrun of the budget is
 * logged and abandoned: it never affects the node.
 */
public final class DeliveryWarmUp {
    private static final Logger LOG = LoggerFactory.getLogger(DeliveryWarmUp.class);
    static final int MESSAGES = 3_000;
    private static final String TOPIC = "warm-up";

    private DeliveryWarmUp() {
    }

    /**
     * Runs the warm-up in {@code dir} (created, then deleted), on the calling thread, for at most
     * about {@code budget} and until {@code stopped} says so; answers whether every message was
     * acknowledged in time.
     */
    public static boolean run(Path dir, Duration budget, java.util.function.BooleanSupplier stopped) {
        long started = System.nanoTime();
        long deadline = started + budget.toNanos();
        try (EventStore store = EventStore.open(dir)) {
            StateApplier applier = new StateApplier(store);
            Immediate replicator = new Immediate(applier);
            DeliveryEngine engine = new DeliveryEngine(DeliveryConfig.DEFAULTS, store, replicator, Clock.systemUTC());
            applier.addListener(engine);
            try {
                engine.start();
                engine.setLeading(true);
                boolean done = exercise(engine, replicator, deadline, stopped);
                LOG.debug("delivery warm-up {} in {} ms", done ? "done" : "abandoned", (System.nanoTime() - started) / 1_000_000);
                return done;
            } finally {
                engine.close();
            }
        } catch (RuntimeException e) {
            LOG.warn("delivery warm-up failed (no effect on this node): {}", e.toString());
            return false;
        } finally {
            delete(dir);
        }
    }

    private static void delete(Path dir) {
        try {
            EventStore.delete(dir);
        } catch (java.io.IOException | RuntimeException e) {
            LOG.warn("could not delete the delivery warm-up's directory {}: {}", dir, e.toString());
        }
    }

    private static boolean exercise(DeliveryEngine engine, Immediate replicator, long deadline,
                                    java.util.function.BooleanSupplier stopped) {
        Sink groupSink = new Sink();
        Sink allSink = new Sink();
        Consumer group = engine.subscribe(TOPIC, "g", groupSink, 0).join();
        Consumer universal = engine.subscribe(TOPIC, "", allSink, 0).join();
        for (int entry = 0; entry < 30; entry++) {
            PutCmd.Builder put = PutCmd.newBuilder();
            for (int i = 0; i < MESSAGES / 30; i++) {
                put.addMessages(NewMessage.newBuilder().setTopic(TOPIC).setPayload(ByteString.copyFromUtf8("warm-up " + i))
                        .setDelayMs(i % 10 == 0 ? 1 : 0).setTtlMs(i % 7 == 0 ? 600_000 : 0));
            }
            replicator.propose(Command.newBuilder().setPut(put).build()).join();
        }
        int groupAcked = 0;
        int nacked = 0;
        int handled = 0;
        while (groupAcked < MESSAGES && System.nanoTime() < deadline && !stopped.getAsBoolean()) {
            engine.dispatchOnce();
            List<EventKey> batch = new ArrayList<>();
            for (Delivery d = group.poll(); d != null; d = group.poll()) {
                if (d.attempt() == 1 && nacked < 50) {
                    engine.nack(group, d.tag());
                    nacked++;
                } else if (++handled % 3 == 0) {
                    engine.ack(group, d.tag());
                    groupAcked++;
                } else {
                    batch.add(d.tag());
                }
            }
            groupAcked += batch.size() - engine.ackAll(group, batch).size();
            List<EventKey> seen = new ArrayList<>();
            for (Delivery d = universal.poll(); d != null; d = universal.poll()) {
                seen.add(d.tag());
            }
            engine.ackAll(universal, seen); // those the group's deletes removed first are refused, not thrown
            engine.flushDeletes().join();
            Thread.onSpinWait();
        }
        engine.disconnect(group);
        engine.disconnect(universal);
        engine.flushDeletes().join();
        return groupAcked >= MESSAGES;
    }

    /** A consumer the warm-up drains by hand. */
    private static final class Sink implements Consumer.Sink {
        @Override
        public void deliveriesAvailable() {
        }

        @Override
        public void closed(String reason) {
        }
    }

    /** Stamps and applies each command at once, as one entry of term 1 (a store nobody else reads). */
    private static final class Immediate implements Replicator {
        private final StateApplier applier;
        private long index;

        Immediate(StateApplier applier) {
            this.applier = applier;
        }

        @Override
        public synchronized CompletableFuture<CommandReply> propose(Command command) {
            try {
                Command stamped = command.toBuilder().setStampedAtMs(System.currentTimeMillis()).build();
                return CompletableFuture.completedFuture(applier.apply(stamped, new TermIndex(1, ++index)).reply());
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }

        @Override
        public boolean isLeader() {
            return true;
        }
    }
}
