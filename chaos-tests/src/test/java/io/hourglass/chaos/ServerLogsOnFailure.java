package io.hourglass.chaos;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * Prints the tail of every watched node's output when a test fails, so that the report shows
 * what the servers were doing. JUnit calls it after {@code @AfterEach}; by then the nodes are
 * stopped, but their output files stay. Register it with {@code @RegisterExtension}.
 */
public final class ServerLogsOnFailure implements TestWatcher {
    private static final int TAIL_LINES = 80;

    private final List<ServerProcess> watched = new CopyOnWriteArrayList<>();

    public void watch(Collection<ServerProcess> nodes) {
        watched.addAll(nodes);
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        StringBuilder b = new StringBuilder();
        for (ServerProcess node : watched) {
            b.append("\n===== ").append(context.getDisplayName()).append(" failed; last ").append(TAIL_LINES)
                    .append(" lines of ").append(node.nodeId()).append(" (").append(node.outputFile())
                    .append(") =====\n").append(node.outputTail(TAIL_LINES)).append('\n');
        }
        System.out.println(b);
    }
}
