package io.hourglass.client;

/**
 * An ACK or NACK named a delivery whose stream has ended (the subscription reconnected or was
 * closed). It was not sent: the server only accepts an ACK on the stream that carried the
 * delivery, and it releases that stream's in-flight messages when the stream ends, so the
 * message will be delivered again.
 */
public final class StaleDeliveryException extends HourglassClientException {
    public StaleDeliveryException(String message) {
        super(message);
    }
}
