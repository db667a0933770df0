package io.hourglass.core.rooms;

/**
 * What an out-of-band send did.
 *
 * @param messageId the id the recipients saw
 * @param recipients how many subscribers it was handed to; 0 means it was dropped (nobody subscribed)
 */
public record OutOfBandReceipt(String messageId, int recipients) {
}
