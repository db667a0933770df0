package io.hourglass.client;

import java.util.Objects;

/**
 * What {@link RoomClient#sendOutOfBand} did.
 *
 * @param messageId the id the message was delivered with
 * @param recipients how many subscriptions received it (0: it was dropped)
 */
public record OutOfBandResult(String messageId, int recipients) {
    public OutOfBandResult {
        Objects.requireNonNull(messageId, "messageId");
    }
}
