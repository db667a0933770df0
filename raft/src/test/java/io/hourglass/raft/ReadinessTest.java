package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The readiness probe of a follower restarted after it missed many entries, in a real three-node
 * group: it answers "not ready" (and says why) until it has applied all but
 * {@link GroupView#READY_MAX_LAG} of what the leader committed, never at the leader's first
 * append, when its own commit index — bounded by the end of its log — says it is caught up. (A
 * rolling restart under load once saw a node ready, then not ready a moment later.)
 */
@Timeout(180)
class ReadinessTest extends GroupTest {
    private static final int MISSED = 3_000;

    @Test
    void aRestartedFollowerIsNotReadyUntilItAppliedWhatTheLeaderCommitted() throws IOException {
        group = new TestGroup(dir, List.of("n1", "n2", "n3")).start(node -> { });
        RaftNode leader = group.awaitOneLeader();
        TestGroup.put(leader, "before").join();
        String followerId = group.nodes().keySet().stream().filter(id -> !id.equals(leader.nodeId())).findFirst().orElseThrow();
        group.close(followerId);

        List<CompletableFuture<?>> puts = new ArrayList<>();
        String payload = "x".repeat(1_000);
        for (int i = 0; i < MISSED; i++) {
            puts.add(TestGroup.put(leader, payload));
        }
        puts.forEach(CompletableFuture::join);
        long committed = leader.status().commitIndex();

        RaftNode follower = group.open(followerId);
        follower.start();
        Set<String> reasons = new LinkedHashSet<>();
        long deadline = System.nanoTime() + 120_000_000_000L;
        Readiness readiness = follower.readiness();
        while (!readiness.ready() && System.nanoTime() < deadline) {
            reasons.add(readiness.detail().replaceAll("[0-9]+", "N"));
            readiness = follower.readiness();
        }
        long applied = follower.status().appliedIndex(); // read after the probe said ready: at least what it saw
        assertTrue(readiness.ready(), () -> "never ready; it said " + reasons);
        assertTrue(committed - applied <= GroupView.READY_MAX_LAG, () -> "ready with " + (committed - applied)
                + " of the leader's committed entries (up to " + committed + ") not applied; before, it said " + reasons);
        assertFalse(reasons.isEmpty(), "a follower that missed " + MISSED + " entries was ready at once");
        assertEquals(leader.nodeId(), follower.status().leaderId());
    }
}
