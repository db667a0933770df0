package io.hourglass.server.cluster;

import io.hourglass.client.DeliveryContext;
import io.hourglass.client.ReceivedMessage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every delivery a test's consumers received and every confirmed ACK that completed, per message
 * id, ordered by one sequence.
 *
 * <p>Ordering: each receipt takes its sequence number on the consumer's handler thread as the
 * handler starts; each confirmation takes one when its future completes. Both come from the same
 * {@link AtomicLong}, so "received after the confirmation completed" is a comparison of two
 * numbers, free of clock resolution. A delivery the server sent before the confirmation can still
 * be handled after it only if it waited in the client's buffer longer than the in-flight timeout
 * (5 s) — the handlers here return at once, so a receipt after the confirmation is a redelivery.
 *
 * <p>Thread-safe: concurrent maps and queues; called from handler and gRPC threads.
 */
final class DeliveryLog {
    /** One delivery as the consumer saw it. */
    record Receipt(long seq, String consumer, String id, int attempt, long dueAtMs, long deliveredAtMs,
                   long receivedAtMs) {
    }

    private final AtomicLong sequence = new AtomicLong();
    private final Map<String, Queue<Receipt>> receipts = new ConcurrentHashMap<>();
    /** Message id → sequence number of its first completed confirmed ACK. */
    private final Map<String, Long> confirmations = new ConcurrentHashMap<>();
    /** Message id → why its last confirmed ACK failed (allowed across a failover; kept for reports). */
    private final Map<String, Throwable> failedConfirmations = new ConcurrentHashMap<>();
    private final AtomicInteger deliveries = new AtomicInteger();

    /** Records a delivery; call first thing in the handler. Returns its sequence number. */
    long received(String consumer, ReceivedMessage m) {
        long seq = sequence.incrementAndGet();
        receipts.computeIfAbsent(m.id(), id -> new ConcurrentLinkedQueue<>())
                .add(new Receipt(seq, consumer, m.id(), m.attempt(), m.dueAtMs(), m.deliveredAtMs(),
                        System.currentTimeMillis()));
        deliveries.incrementAndGet();
        return seq;
    }

    /** Sends a confirmed ACK and records when (or why not) it completes. Never blocks. */
    CompletableFuture<Void> ackConfirmed(ReceivedMessage m, DeliveryContext context) {
        return context.ackConfirmed().whenComplete((ok, error) -> {
            if (error == null) {
                confirmations.putIfAbsent(m.id(), sequence.incrementAndGet());
            } else {
                failedConfirmations.put(m.id(), error);
            }
        });
    }

    /** The current sequence number: receipts after this mark have a larger one. */
    long mark() {
        return sequence.get();
    }

    boolean receivedAll(Set<String> ids) {
        return receipts.keySet().containsAll(ids);
    }

    boolean confirmedAll(Set<String> ids) {
        return confirmations.keySet().containsAll(ids);
    }

    int confirmedCount() {
        return confirmations.size();
    }

    int deliveryCount() {
        return deliveries.get();
    }

    /** How many deliveries {@code consumer} received after {@code mark}. */
    long receivedBy(String consumer, long mark) {
        return receipts.values().stream().flatMap(Queue::stream)
                .filter(r -> r.consumer().equals(consumer) && r.seq() > mark).count();
    }

    /** Ids of {@code ids} not received yet, at most {@code limit} of them (for failure messages). */
    List<String> missing(Set<String> ids, int limit) {
        return ids.stream().filter(id -> !receipts.containsKey(id)).limit(limit).toList();
    }

    /**
     * Deliveries received after a confirmed ACK of the same message had completed (the first 20):
     * the broker promised never to deliver those again. Must be empty.
     */
    List<Receipt> deliveredAfterConfirmation() {
        List<Receipt> violations = new ArrayList<>();
        confirmations.forEach((id, confirmedAt) -> receipts.getOrDefault(id, new ConcurrentLinkedQueue<>()).stream()
                .filter(r -> r.seq() > confirmedAt).forEach(violations::add));
        return violations.stream().sorted(Comparator.comparingLong(Receipt::seq)).limit(20).toList();
    }

    /** Deliveries sent or received before the message was due (the first 20). Must be empty. */
    List<Receipt> deliveredBeforeDue() {
        return receipts.values().stream().flatMap(Queue::stream)
                .filter(r -> r.deliveredAtMs() < r.dueAtMs() || r.receivedAtMs() < r.dueAtMs())
                .limit(20).toList();
    }

    /** A line for reports: counts and a few failed confirmations. */
    String summary() {
        return receipts.size() + " messages received in " + deliveries.get() + " deliveries, " + confirmations.size()
                + " confirmed, " + failedConfirmations.size() + " confirmations failed"
                + (failedConfirmations.isEmpty() ? "" : " (e.g. " + failedConfirmations.values().iterator().next() + ")");
    }
}
