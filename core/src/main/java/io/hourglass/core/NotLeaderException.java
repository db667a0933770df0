package io.hourglass.core;

import java.util.Optional;

/** This node cannot serve the request because it is not the leader; carries the leader hint. */
public final class NotLeaderException extends HourglassException {
    private final String leaderHint;

    public NotLeaderException(String leaderHint) {
        super(leaderHint == null ? "this node is not the leader and no leader is known"
                : "this node is not the leader; the leader is " + leaderHint);
        this.leaderHint = leaderHint;
    }

    public Optional<String> leaderHint() {
        return Optional.ofNullable(leaderHint);
    }
}
