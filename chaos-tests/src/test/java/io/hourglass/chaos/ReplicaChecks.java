package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;

import io.hourglass.api.v1.StateDigestResponse;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.HourglassClientException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.awaitility.core.ConditionTimeoutException;

/** Checks on the replicas of a {@link ProcessCluster}: caught up, the same state, what a node printed. */
final class ReplicaChecks {
    private static final Duration POLL = Duration.ofMillis(200);

    private ReplicaChecks() {
    }

    /** Waits until {@code node} has applied everything {@code leader} had committed when this was called. */
    static void awaitCaughtUp(ServerProcess node, ServerProcess leader, Duration atMost) {
        long target = Gauges.commit(leader);
        if (target < 0) {
            throw new AssertionError(leader.nodeId() + " exports no commit index");
        }
        try {
            await(node.nodeId() + " applies up to " + target).atMost(atMost).pollInterval(POLL)
                    .until(() -> Gauges.applied(node) >= target);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(node.nodeId() + " did not catch up with " + leader.nodeId() + " (commit " + target
                    + ") within " + atMost + "; it is at " + Gauges.applied(node) + "\n" + node.outputTail(40), e);
        }
    }

    /**
     * Waits until every node reports the same applied index and checks that their state digests are
     * then equal: no replica holds anything the others do not. Call it once the load has stopped.
     */
    static void assertSameState(List<ServerProcess> nodes, Duration atMost) {
        List<HourglassClient> clients = new ArrayList<>();
        for (ServerProcess n : nodes) {
            clients.add(HourglassClient.builder().servers(List.of(n.ports().grpcAddress())).build());
        }
        try {
            Map<String, StateDigestResponse> last = new TreeMap<>();
            await("every node at the same applied index").atMost(atMost).pollInterval(POLL).until(() -> {
                last.clear();
                for (HourglassClient c : clients) {
                    try {
                        StateDigestResponse d = c.admin().stateDigest();
                        last.put(d.getNodeId(), d);
                    } catch (HourglassClientException e) {
                        return false;
                    }
                }
                return last.values().stream().map(StateDigestResponse::getAppliedIndex).distinct().count() == 1;
            });
            long digests = last.values().stream().map(StateDigestResponse::getSha256).distinct().count();
            if (digests != 1) {
                throw new AssertionError("replicas at the same applied index differ: " + last);
            }
        } finally {
            clients.forEach(HourglassClient::close);
        }
    }

    /** What the node printed since it was last started (its server.out after the last start marker). */
    static String lastIncarnation(ServerProcess node) {
        try {
            List<String> lines = Files.readAllLines(node.outputFile(), StandardCharsets.UTF_8);
            int start = 0;
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).startsWith("=== ") && lines.get(i).contains(" starting: ")) {
                    start = i;
                }
            }
            return String.join("\n", lines.subList(start, lines.size()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
