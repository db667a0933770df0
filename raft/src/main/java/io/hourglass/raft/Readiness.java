package io.hourglass.raft;

/**
 * The readiness probe's answer: {@code ready}, or why not in a few words an operator can act on
 * (no leader, behind by N entries, no word from the leader for N ms).
 */
public record Readiness(boolean ready, String detail) {
    static final Readiness READY = new Readiness(true, "ready");

    static Readiness not(String detail) {
        return new Readiness(false, detail);
    }
}
