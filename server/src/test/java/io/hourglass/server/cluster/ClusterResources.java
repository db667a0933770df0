package io.hourglass.server.cluster;

import io.hourglass.server.testing.TestCluster;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one cluster test owns: its cluster and its clients (and any other resource handed to
 * {@link #own}). Registered with {@code @RegisterExtension}; after each test it closes them in
 * reverse order of creation (clients before the cluster), and when the test fails it first logs
 * every node's state, while the nodes still run.
 *
 * <p>Thread-safety: the test thread registers; JUnit closes on the same thread afterwards.
 */
final class ClusterResources implements AfterEachCallback, TestExecutionExceptionHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterResources.class);

    private final Deque<AutoCloseable> owned = new ArrayDeque<>();
    private TestCluster cluster;

    /** Starts a cluster (see {@link TestCluster#start}) that is closed after the test. */
    TestCluster start(Path root, int size, Map<String, String> settings) {
        cluster = own(TestCluster.start(root, size, settings));
        return cluster;
    }

    /** Closes {@code resource} after the test, before everything registered earlier. */
    <T extends AutoCloseable> T own(T resource) {
        owned.push(resource);
        return resource;
    }

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        if (cluster != null) {
            LOG.error("{} failed: {}\n{}", context.getDisplayName(), failure.toString(), cluster.describe());
        }
        throw failure;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        Exception first = null;
        while (!owned.isEmpty()) {
            AutoCloseable resource = owned.pop();
            try {
                resource.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        cluster = null;
        if (first != null) {
            throw first;
        }
    }
}
