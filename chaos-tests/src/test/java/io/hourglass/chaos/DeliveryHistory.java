package io.hourglass.chaos;

import io.hourglass.api.v1.Delivery;
import io.hourglass.client.DeliveryContext;
import io.hourglass.client.ReceivedMessage;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the consumers of one group saw, and the checker of the confirmed-ACK promise: once
 * {@code ackConfirmed()} has completed for a message, the group never receives that message again.
 *
 * <p>Two kinds of events share one global order, a counter taken when each happens: every delivery
 * as it comes off the wire (fed by {@link DeliveryWiretap}) and every confirmation as its future
 * completes. A delivery of message M whose stamp is above M's first confirmation stamp broke the
 * promise. Stamping on the wire, not in the handler, keeps deliveries that the server sent
 * <em>before</em> it confirmed (still queued for the handler) from counting as violations.
 *
 * <p>Thread-safe: wire events come on gRPC threads, handler events on the subscription thread,
 * confirmations on gRPC threads.
 */
final class DeliveryHistory {
    /** A delivery frame as it reached the client. */
    record Receipt(String id, long order, int attempt, long deliveredAtMs) {
    }

    /** A delivery of {@code receipt.id()} received after that message's ACK was confirmed. */
    record Violation(long confirmedOrder, Receipt receipt) {
    }

    private final AtomicLong order = new AtomicLong();
    private final Queue<Receipt> receipts = new ConcurrentLinkedQueue<>();
    /** Message id → order stamp of its first confirmation; only ever added to. */
    private final Map<String, Long> confirmedAt = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
    /** Message id → the payload(s) handed to the handler, distinct ones joined with " | ". */
    private final Map<String, String> payloads = new ConcurrentHashMap<>();
    private final AtomicInteger pendingConfirmations = new AtomicInteger();
    private final LongAdder failedConfirmations = new LongAdder();

    /** Records a delivery frame; called by the wiretap before the client library sees it. */
    void onWire(Delivery delivery) {
        String id = delivery.getId().isEmpty()
                ? HexFormat.of().formatHex(delivery.getTag().toByteArray()) : delivery.getId();
        receipts.add(new Receipt(id, order.incrementAndGet(), delivery.getAttempt(), delivery.getDeliveredAtMs()));
    }

    /** Records that the handler got {@code message}, then ACKs it with confirmation and records the outcome. */
    void handleAndConfirm(ReceivedMessage message, DeliveryContext context) {
        handled.computeIfAbsent(message.id(), id -> new AtomicInteger()).incrementAndGet();
        payloads.merge(message.id(), message.payloadUtf8(), (a, b) -> a.equals(b) ? a : a + " | " + b);
        pendingConfirmations.incrementAndGet();
        context.ackConfirmed().whenComplete((ok, error) -> {
            if (error == null) {
                confirmedAt.putIfAbsent(message.id(), order.incrementAndGet());
            } else {
                // The stream ended first: the ACK may or may not have committed; either is allowed.
                failedConfirmations.increment();
            }
            pendingConfirmations.decrementAndGet();
        });
    }

    /** Distinct messages the handler has been given. */
    int handledCount() {
        return handled.size();
    }

    boolean wasHandled(String id) {
        return handled.containsKey(id);
    }

    /** Handler calls, redeliveries included. */
    long handlerCalls() {
        return handled.values().stream().mapToLong(AtomicInteger::get).sum();
    }

    /** Distinct messages whose ACK a server confirmed. */
    int confirmedCount() {
        return confirmedAt.size();
    }

    int pendingConfirmations() {
        return pendingConfirmations.get();
    }

    long failedConfirmations() {
        return failedConfirmations.sum();
    }

    int wireReceipts() {
        return receipts.size();
    }

    /** Every delivery that reached the client after its message's ACK had been confirmed. */
    List<Violation> deliveriesAfterConfirmation() {
        List<Violation> violations = new ArrayList<>();
        for (Receipt r : receipts) {
            Long confirmed = confirmedAt.get(r.id());
            if (confirmed != null && r.order() > confirmed) {
                violations.add(new Violation(confirmed, r));
            }
        }
        return violations;
    }

    /**
     * Deliveries that do not match what was published: an id never published, or a payload other
     * than the published one.
     *
     * @param published payload by message id
     */
    List<String> mismatches(Map<String, String> published) {
        List<String> mismatches = new ArrayList<>();
        payloads.forEach((id, payload) -> {
            String expected = published.get(id);
            if (expected == null) {
                mismatches.add(id + " was never published (payload '" + payload + "')");
            } else if (!expected.equals(payload)) {
                mismatches.add(id + " carried '" + payload + "', published '" + expected + "'");
            }
        });
        return mismatches;
    }
}
