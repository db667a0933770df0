package io.hourglass.core.delivery;

/** How a committed cancel ended ({@link DeliveryEngine#cancel}). */
public enum CancelOutcome {
    /** No copy had gone out: nobody receives the message. */
    CANCELLED,
    /** A copy had gone out (in flight, or acknowledged by a group): deleted, never redelivered. */
    ALREADY_DELIVERED
}
