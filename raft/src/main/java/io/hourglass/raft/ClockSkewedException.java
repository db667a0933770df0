package io.hourglass.raft;

import java.io.IOException;

/**
 * Why a leader refused to stamp a proposal: its clock is off the other nodes' ({@link ClockWatch}).
 * It reaches a proposer inside Ratis' StateMachineException, and {@link Proposer} answers
 * UNAVAILABLE — the request was fine, this node's clock is not, and another server may serve it.
 */
final class ClockSkewedException extends IOException {
    private static final long serialVersionUID = 1L;

    ClockSkewedException(String message) {
        super(message);
    }
}
