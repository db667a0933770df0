package io.hourglass.server.admin;

import io.hourglass.core.FailedPreconditionException;
import io.hourglass.core.HourglassException;
import io.hourglass.core.UnavailableException;
import java.io.IOException;

/** The status a failed leadership transfer answers with (AdminService's {@code transferLeader}). */
final class TransferFailures {
    private TransferFailures() {
    }

    /**
     * What a failed transfer tells the caller. Ratis may lose a transfer's election to the third
     * node on a busy machine (DIFFERENT_LEADER): UNAVAILABLE, which the CLI and the client retry
     * against the node that leads now. Anything else (the target did not catch up in time, is
     * unreachable): FAILED_PRECONDITION saying so — never INTERNAL, nothing is wrong with the node.
     */
    static HourglassException of(String target, IOException e) {
        String who = HourglassException.excerpt(target);
        String message = String.valueOf(e.getMessage());
        if (message.contains("DIFFERENT_LEADER")) {
            return new UnavailableException("leadership went to another node than " + who
                    + " in the transfer's election; ask again", null);
        }
        // Ratis ends its message with the outcome (TIMED_OUT, NOT_UP_TO_DATE, ...).
        String outcome = message.substring(message.lastIndexOf(": ") + 1).trim();
        return new FailedPreconditionException("leadership did not move to " + who + ": "
                + HourglassException.excerpt(outcome));
    }
}
