package io.hourglass.raft;

import java.lang.reflect.Field;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mends the chain a Ratis 3.3.0 follower orders its log appends on, once one link failed.
 *
 * <p>A follower appends each batch of entries after the previous batch's append completed: its
 * division keeps the last append's future and composes the next one onto it
 * ({@code RaftServerImpl.appendLogTermIndices}, a {@code NavigableIndices}, with
 * {@code raft.server.log.append-entries.compose.enabled}, the default). A future composed onto a
 * failed one fails without running, so after a single failed append every later append fails too,
 * with the same exception, for as long as the process runs: the follower answers every append with
 * an error and never catches up. It happened in CI: two appends raced ("Already running a method by
 * Thread[n2-server-thread1]") on a node restarted after a leader kill; the node then failed 14 422
 * entries' appends over and over and stayed "catching up" for 90 s. (The race itself comes from the
 * chain being extended inside {@code AtomicReference.updateAndGet}, which re-runs its function when
 * two appends from different streams contend, so one batch is composed onto the old tail as well.)
 *
 * <p>Raft needs nothing from that future: the log checks each append against its previous entry
 * and the leader resends what failed. So a failed tail is replaced by a completed future, the
 * failure logged and counted, and the next append the leader sends runs. Called from the follower
 * watch thread (see {@link LogWatches}); found by reflection, so a Ratis upgrade that moves the
 * field turns the mend off with one warning (and fails {@code AppendChainTest}).
 */
final class AppendChain {
    private static final Logger LOG = LoggerFactory.getLogger(AppendChain.class);

    private final String nodeId;
    private final Supplier<RaftServer.Division> division;
    private volatile boolean unavailable;
    private volatile long mends;

    /** @param division this node's division, or null while it has none */
    AppendChain(String nodeId, Supplier<RaftServer.Division> division) {
        this.nodeId = nodeId;
        this.division = division;
    }

    /** Replaces a failed tail of the append chain; returns whether it did. */
    boolean mend() {
        AtomicReference<CompletableFuture<Void>> tail = tail();
        if (tail == null) {
            return false;
        }
        CompletableFuture<Void> current = tail.get();
        if (!current.isCompletedExceptionally() || !tail.compareAndSet(current, CompletableFuture.completedFuture(null))) {
            return false;
        }
        mends++;
        LOG.warn("{}: a log append failed and Ratis would fail every later append with it; cleared, the leader resends "
                + "({})", nodeId, causeOf(current));
        return true;
    }

    /** Failed append chains this node replaced (see the class). */
    long mends() {
        return mends;
    }

    /** Whether the chain can be reached (false once a Ratis without it was found). */
    boolean available() {
        return tail() != null;
    }

    /** For tests: makes the chain's tail {@code future}. */
    void replaceTail(CompletableFuture<Void> future) {
        AtomicReference<CompletableFuture<Void>> tail = tail();
        if (tail == null) {
            throw new IllegalStateException("no append chain in this Ratis");
        }
        tail.set(future);
    }

    @SuppressWarnings("unchecked")
    private AtomicReference<CompletableFuture<Void>> tail() {
        if (unavailable) {
            return null;
        }
        RaftServer.Division d = division.get();
        if (d == null) {
            return null;
        }
        try {
            Object indices = field(d.getClass(), "appendLogTermIndices").get(d);
            if (indices == null) {
                return null; // compose disabled: appends are not chained
            }
            return (AtomicReference<CompletableFuture<Void>>) field(indices.getClass(), "future").get(indices);
        } catch (ReflectiveOperationException | RuntimeException e) {
            unavailable = true;
            LOG.warn("{}: cannot reach Ratis' append chain ({}); a failed follower append will not be mended", nodeId,
                    e.toString());
            return null;
        }
    }

    private static Field field(Class<?> type, String name) throws NoSuchFieldException {
        Field f = type.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }

    private static String causeOf(CompletableFuture<Void> failed) {
        try {
            failed.getNow(null);
            return "?";
        } catch (CompletionException e) {
            Throwable c = e.getCause() instanceof CompletionException && e.getCause().getCause() != null
                    ? e.getCause().getCause() : e.getCause();
            return String.valueOf(c);
        } catch (RuntimeException e) {
            return e.toString();
        }
    }
}
