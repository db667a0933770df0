package io.hourglass.chaos.check;

import java.util.Arrays;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The availability of every fault of one kind: how many there were, and the median and maximum of
 * their publish and delivery recovery times (ms). A fault that never recovered counts as an
 * infinitely long recovery, so a median or maximum is {@link FaultAvailability#NONE} when it falls
 * on such a fault. The median is the lower one: of an even count, the smaller middle value.
 *
 * @param kind the fault kind
 * @param count how many faults of this kind the history holds
 * @param publishP50Ms median publish recovery
 * @param publishMaxMs longest publish recovery
 * @param deliveryP50Ms median delivery recovery
 * @param deliveryMaxMs longest delivery recovery
 */
public record KindAvailability(String kind, int count, long publishP50Ms, long publishMaxMs, long deliveryP50Ms,
        long deliveryMaxMs) {

    /** The aggregate of {@code faults}, all of kind {@code kind} (at least one). */
    static KindAvailability of(String kind, List<FaultAvailability> faults) {
        if (faults.isEmpty()) {
            throw new IllegalArgumentException("no faults of kind " + kind);
        }
        long[] publish = sortedNoneLast(faults, FaultAvailability::publishRecoveryMs);
        long[] delivery = sortedNoneLast(faults, FaultAvailability::deliveryRecoveryMs);
        return new KindAvailability(kind, faults.size(), median(publish), max(publish), median(delivery),
                max(delivery));
    }

    /** The figures in ascending order, {@code NONE} (never recovered) after every real value. */
    private static long[] sortedNoneLast(List<FaultAvailability> faults, ToLongFunction<FaultAvailability> figure) {
        long[] values = faults.stream().mapToLong(figure)
                .map(v -> v == FaultAvailability.NONE ? Long.MAX_VALUE : v)
                .sorted().toArray();
        return Arrays.stream(values).map(v -> v == Long.MAX_VALUE ? FaultAvailability.NONE : v).toArray();
    }

    private static long median(long[] sorted) {
        return sorted[(sorted.length - 1) / 2];
    }

    private static long max(long[] sorted) {
        return sorted[sorted.length - 1];
    }
}
