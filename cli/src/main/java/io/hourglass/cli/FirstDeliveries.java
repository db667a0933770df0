package io.hourglass.cli;

import java.util.BitSet;

/**
 * Which of the bench's messages (numbered from 0 by the sender) were delivered already. Delivery is
 * at least once: after a failover or a leadership transfer some messages come again, and the bench
 * counts those as duplicates instead of as deliveries or latencies. Thread-safe; one bit per message.
 */
final class FirstDeliveries {
    private final BitSet seen = new BitSet();
    private long duplicates;

    /** True the first time {@code seq} is delivered; false (and one more duplicate) after that. */
    synchronized boolean first(long seq) {
        if (seq < 0 || seq > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("not a bench message number: " + seq);
        }
        if (seen.get((int) seq)) {
            duplicates++;
            return false;
        }
        seen.set((int) seq);
        return true;
    }

    synchronized long duplicates() {
        return duplicates;
    }
}
