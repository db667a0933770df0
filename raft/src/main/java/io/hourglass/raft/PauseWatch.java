package io.hourglass.raft;

import java.lang.reflect.Field;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.JvmPauseMonitor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches for stalls of the whole process (a long GC, a busy or suspended host) and reports them, in
 * place of the Ratis server's own pause monitor, which also acts on them.
 *
 * <p>Why: Ratis makes every leader of the server step down after a stall longer than its leader
 * step-down wait, which Hourglass shortens to one maximum election timeout (2 s) so that a leader cut
 * off from a majority steps down soon (see {@link RatisSettings}). A stall says nothing about the
 * followers, though: on a busy CI machine a single-node cluster gave up its leadership after a 2-4 s
 * stall and its clients got "not the leader and no leader is known" from the only member, and a stall
 * of the whole machine made every leader of a local cluster step down at once, each an election.
 * Stepping down is not needed for safety either: a leader that lost touch finds a newer term in its
 * next reply, and its lease counts only answers it received ({@link GroupView#holdsLease()}). Past
 * 60 s Ratis would even close the server; this watch never acts, it logs (Ratis' monitor's WARN line,
 * with the GC times).
 *
 * <p>Taking over reaches into the Ratis server for its monitor (no setting turns the action off
 * without also changing the step-down wait); a Ratis version without that field keeps its monitor,
 * says so once, and {@code JvmPauseTest} fails.
 */
final class PauseWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PauseWatch.class);

    private final JvmPauseMonitor monitor;

    private PauseWatch(String nodeId) {
        this.monitor = JvmPauseMonitor.newBuilder().setName(nodeId).setHandler(extra -> { }).build();
    }

    /** Stops {@code server}'s (started) pause monitor and starts this watch in its place. */
    static PauseWatch takeOver(RaftServer server, String nodeId) {
        try {
            Field field = server.getClass().getDeclaredField("pauseMonitor");
            field.setAccessible(true);
            ((JvmPauseMonitor) field.get(server)).stop();
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn("{}: could not replace the Raft server's pause monitor ({}): a stall of this process longer than "
                    + "raft.electionTimeoutMax makes its leaders step down", nodeId, e.toString());
        }
        PauseWatch watch = new PauseWatch(nodeId);
        watch.monitor.start();
        return watch;
    }

    @Override
    public void close() {
        monitor.stop();
    }
}
