package io.hourglass.client;

/** How a committed {@link HourglassClient#cancel} ended. */
public enum CancelResult {
    /** No copy had gone out: nobody receives the message. */
    CANCELLED,
    /** A copy had gone out before the cancel committed; the message is deleted all the same and not redelivered. */
    ALREADY_DELIVERED
}
