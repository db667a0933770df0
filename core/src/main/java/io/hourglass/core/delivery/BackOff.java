package io.hourglass.core.delivery;

import io.hourglass.core.proto.GroupPolicy;
import java.util.List;

/** A durable group's back-off (DESIGN §9): the wait before redelivering after a failed delivery. */
final class BackOff {
    private BackOff() {
    }

    /**
     * The wait after delivery number {@code failedAttempt} came back without a delay of its own:
     * step k for the k-th (the last step repeats); 0 when the group has no back-off.
     */
    static long afterAttempt(GroupPolicy policy, int failedAttempt) {
        List<Long> steps = policy == null ? List.of() : policy.getBackoffMsList();
        if (steps.isEmpty()) {
            return 0;
        }
        return steps.get(Math.min(Math.max(1, failedAttempt), steps.size()) - 1);
    }
}
