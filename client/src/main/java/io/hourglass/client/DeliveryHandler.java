package io.hourglass.client;

/**
 * Receives a subscription's deliveries.
 *
 * <p>Called on the subscription's own thread, one delivery at a time, in the order the server
 * sent them; the next delivery waits until this call returns, and the server sends more only
 * as calls return (gRPC flow control), so a slow handler slows its stream instead of filling
 * memory — except while a confirmed ACK is outstanding, when the stream reads ahead so that the
 * confirmation can arrive (a handler may block on {@link DeliveryContext#ackConfirmed()}). A handler that throws gets its delivery NACKed (redelivered) unless it already
 * settled it. A delivery neither ACKed nor NACKed is redelivered after the server's in-flight
 * timeout.
 */
@FunctionalInterface
public interface DeliveryHandler {
    void onDelivery(ReceivedMessage message, DeliveryContext context) throws Exception;
}
