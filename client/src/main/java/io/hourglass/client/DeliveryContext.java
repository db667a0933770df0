package io.hourglass.client;

import java.util.concurrent.CompletableFuture;

/**
 * Settles one delivery. Methods may be called from any thread, also after the handler returned.
 * Only the first of {@code ack}, {@code ackConfirmed} or {@code nack} counts; later calls are
 * ignored ({@code ackConfirmed} then returns a future failed with {@link IllegalStateException}).
 *
 * <p>An ACK or NACK is sent only on the stream that carried the delivery. If that stream has
 * ended (reconnect, close), nothing is sent: the server has already released the delivery and
 * will deliver the message again.
 */
public interface DeliveryContext {
    /** Acknowledges the delivery without waiting for the deletion to be replicated. */
    void ack();

    /**
     * Acknowledges the delivery and asks the server to answer once the deletion has committed,
     * after which the message is never delivered to this group again.
     *
     * <p>The handler may block on this future: while a confirmation is outstanding the stream
     * keeps reading past its delivery buffer, so the answer is never stuck behind deliveries that
     * wait for this same handler (see {@code ConsumerStream}). Blocking costs one confirmation
     * round trip per delivery, though; a handler that wants throughput keeps several
     * confirmations outstanding and waits for the oldest (as {@code hourglass consume --confirm}
     * does).
     *
     * @return completes when the server confirms; fails with {@link InvalidRequestException} if
     *     the server refused the ACK, {@link StaleDeliveryException} if the stream had already
     *     ended, {@link UnavailableException} if it ended before the answer came
     */
    CompletableFuture<Void> ackConfirmed();

    /** Gives the delivery back: it becomes deliverable again at once. */
    void nack();

    /**
     * Gives the delivery back to be redelivered no earlier than {@code delay} from now (at most the
     * server's {@code limits.maxDelay}). For a consumer group the delay is replicated: a new leader
     * after a failover waits it out too. Implementations that cannot delay give it back at once.
     */
    default void nack(java.time.Duration delay) {
        nack();
    }
}
