package io.hourglass.chaos.check;

/**
 * How long one injected fault kept publishes and deliveries from succeeding; see "Availability" in
 * the package documentation for the definitions. Every time is in ms; {@link #NONE} marks a figure
 * that does not exist (no success after the fault, or a fault never healed).
 *
 * @param kind the fault's kind, e.g. {@code kill-leader}
 * @param node the node(s) the fault hit, as recorded (may be a comma list)
 * @param start when the fault was injected (epoch ms)
 * @param durationMs {@code end - start}, or {@link #NONE} if the fault was never healed
 * @param publishRecoveryMs from {@code start} until the first publish made after it succeeded
 * @param deliveryRecoveryMs from {@code start} until the first 0-delay message published after it
 *     was delivered
 */
public record FaultAvailability(String kind, String node, long start, long durationMs, long publishRecoveryMs,
        long deliveryRecoveryMs) {
    /** The value of a figure that does not exist. */
    public static final long NONE = -1;

    /** Whether a publish made after the fault started succeeded at all. */
    public boolean publishRecovered() {
        return publishRecoveryMs != NONE;
    }

    /** Whether a 0-delay message published after the fault started was delivered at all. */
    public boolean deliveryRecovered() {
        return deliveryRecoveryMs != NONE;
    }
}
