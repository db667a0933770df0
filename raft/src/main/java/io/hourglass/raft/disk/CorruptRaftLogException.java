package io.hourglass.raft.disk;

/**
 * This node's Raft log (or its term-and-vote file) is damaged in a way no crash leaves behind, so the
 * node does not start: it must never vote, lead or serve from it. {@code hourglass-server} exits with
 * {@link #EXIT_STATUS}; the message names the file, what is wrong and the repair (see
 * {@link RaftLogCheck}).
 */
public final class CorruptRaftLogException extends RuntimeException {
    /** {@code hourglass-server}'s exit status for it: EX_DATAERR, "do not restart me, repair me". */
    public static final int EXIT_STATUS = 65;
    private static final long serialVersionUID = 1L;

    public CorruptRaftLogException(String message) {
        super(message);
    }

    public CorruptRaftLogException(String message, Throwable cause) {
        super(message, cause);
    }
}
