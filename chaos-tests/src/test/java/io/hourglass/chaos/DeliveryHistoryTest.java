package io.hourglass.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.api.v1.Delivery;
import io.hourglass.client.DeliveryContext;
import io.hourglass.client.ReceivedMessage;
import io.hourglass.client.StaleDeliveryException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The checker the process tests rely on, driven by hand: what counts as a broken confirmed ACK. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
final class DeliveryHistoryTest {
    private static final byte[] TAG_A = tag(1);
    private static final byte[] TAG_B = tag(2);
    private static final String A = HexFormat.of().formatHex(TAG_A);
    private static final String B = HexFormat.of().formatHex(TAG_B);

    private final DeliveryHistory history = new DeliveryHistory();

    @Test
    void aDeliveryThatArrivesAfterTheConfirmationIsAViolation() {
        history.onWire(wire(TAG_A, 1));
        ManualContext first = new ManualContext();
        history.handleAndConfirm(received(TAG_A, "a"), first);
        first.confirmation.complete(null);

        history.onWire(wire(TAG_A, 2));

        List<DeliveryHistory.Violation> violations = history.deliveriesAfterConfirmation();
        assertEquals(1, violations.size());
        assertEquals(A, violations.get(0).receipt().id());
        assertEquals(2, violations.get(0).receipt().attempt());
    }

    @Test
    void aDeliveryThatArrivedBeforeTheConfirmationIsNotOneEvenIfHandledLater() {
        history.onWire(wire(TAG_A, 1));
        ManualContext first = new ManualContext();
        history.handleAndConfirm(received(TAG_A, "a"), first);
        history.onWire(wire(TAG_A, 2));
        first.confirmation.complete(null);
        history.handleAndConfirm(received(TAG_A, "a"), new ManualContext());

        assertEquals(List.of(), history.deliveriesAfterConfirmation());
        assertEquals(1, history.handledCount());
        assertEquals(2, history.handlerCalls());
    }

    @Test
    void aFailedConfirmationPromisesNothing() {
        history.onWire(wire(TAG_A, 1));
        ManualContext first = new ManualContext();
        history.handleAndConfirm(received(TAG_A, "a"), first);
        first.confirmation.completeExceptionally(new StaleDeliveryException("stream ended"));
        history.onWire(wire(TAG_A, 2));

        assertEquals(List.of(), history.deliveriesAfterConfirmation());
        assertEquals(0, history.confirmedCount());
        assertEquals(1, history.failedConfirmations());
        assertEquals(0, history.pendingConfirmations());
    }

    @Test
    void pendingConfirmationsAreCountedUntilAnswered() {
        ManualContext context = new ManualContext();
        history.handleAndConfirm(received(TAG_A, "a"), context);
        assertEquals(1, history.pendingConfirmations());

        context.confirmation.complete(null);
        assertEquals(0, history.pendingConfirmations());
        assertEquals(1, history.confirmedCount());
    }

    @Test
    void mismatchesNameUnpublishedIdsAndWrongPayloads() {
        history.handleAndConfirm(received(TAG_A, "not-a"), new ManualContext());
        history.handleAndConfirm(received(TAG_B, "b"), new ManualContext());

        List<String> mismatches = history.mismatches(Map.of(A, "a"));
        assertEquals(2, mismatches.size(), () -> mismatches.toString());
        assertTrue(mismatches.stream().anyMatch(s -> s.startsWith(A) && s.contains("'not-a'")), mismatches::toString);
        assertTrue(mismatches.stream().anyMatch(s -> s.startsWith(B) && s.contains("never published")), mismatches::toString);
    }

    private static byte[] tag(int n) {
        byte[] tag = new byte[24];
        tag[23] = (byte) n;
        return tag;
    }

    private static Delivery wire(byte[] tag, int attempt) {
        return Delivery.newBuilder().setTag(ByteString.copyFrom(tag)).setAttempt(attempt).build();
    }

    private static ReceivedMessage received(byte[] tag, String payload) {
        return new ReceivedMessage(tag, HexFormat.of().formatHex(tag), "t", payload.getBytes(StandardCharsets.UTF_8),
                Map.of(), 0, 0, 0, 1);
    }

    /** A delivery context whose confirmation the test completes. */
    private static final class ManualContext implements DeliveryContext {
        final CompletableFuture<Void> confirmation = new CompletableFuture<>();

        @Override
        public void ack() {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletableFuture<Void> ackConfirmed() {
            return confirmation;
        }

        @Override
        public void nack() {
            throw new UnsupportedOperationException();
        }
    }
}
