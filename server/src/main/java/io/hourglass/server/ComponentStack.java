package io.hourglass.server;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's components, started in the order they are pushed and closed in reverse.
 *
 * <p>{@link #push(String, Start, AutoCloseable)} registers a component's close <em>before</em>
 * starting it, so a component whose start fails half-way is closed too (its close must cope with
 * that), and so is everything pushed before it when the caller then closes the stack.
 * {@link #close()} closes every component even when some fail; each failure is logged with the
 * component's name. Closing twice closes nothing the second time.
 *
 * <p>Thread-safe: pushes come from the composition root, a close may come from the shutdown hook
 * or from the thread that stops a failed node; all are serialized on this object.
 */
final class ComponentStack implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ComponentStack.class);

    /** Starts a component. */
    @FunctionalInterface
    interface Start {
        void run() throws IOException;
    }

    private record Entry(String name, AutoCloseable close) {
    }

    private final String nodeId;
    /** Components started (or being started), the last started on top. */
    private final Deque<Entry> started = new ArrayDeque<>();

    ComponentStack(String nodeId) {
        this.nodeId = nodeId;
    }

    /** Pushes a component that needs no start of its own (it is ready once constructed). */
    synchronized <T extends AutoCloseable> T push(String name, T component) {
        started.push(new Entry(name, component));
        return component;
    }

    /**
     * Starts a component and pushes its close; when {@code start} throws, the close stays pushed
     * and the failure is rethrown for the caller, who closes the stack.
     */
    synchronized void push(String name, Start start, AutoCloseable close) throws IOException {
        started.push(new Entry(name, close));
        LOG.debug("{}: starting {}", nodeId, name);
        start.run();
    }

    /** Components pushed and not closed yet. */
    synchronized int size() {
        return started.size();
    }

    /** Closes every component, the last pushed first; logs each failure and goes on. */
    @Override
    public synchronized void close() {
        while (!started.isEmpty()) {
            Entry entry = started.pop();
            try {
                entry.close().close();
            } catch (Exception e) {
                LOG.warn("{}: stopping {} failed: {}", nodeId, entry.name(), e.toString(), e);
            }
        }
    }
}
