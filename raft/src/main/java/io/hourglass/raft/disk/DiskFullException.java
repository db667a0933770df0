package io.hourglass.raft.disk;

/**
 * The node's data directory has (nearly) no free space left: at start, the node does not start; while
 * running, it stops (see {@link FreeSpace}). Either way {@code hourglass-server} exits with
 * {@link #EXIT_STATUS}, the status of a node whose store failed, so that its supervisor starts it again
 * — which succeeds once space has been freed.
 */
public final class DiskFullException extends RuntimeException {
    /** The exit status of a store failure (EX_SOFTWARE): restart me. */
    public static final int EXIT_STATUS = 70;
    private static final long serialVersionUID = 1L;

    public DiskFullException(String message) {
        super(message);
    }
}
