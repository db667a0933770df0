package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node outside a group's configuration that still runs the group (removed while it ran, or left
 * half-added by an add-node that did not finish) stands for election; the leader answers "shut
 * down" and Ratis closes the division. The node stops, as for any division Ratis closes, and its
 * reason says what happened and what to do, not "its error is logged above" with nothing logged.
 */
class EvictedGroupTest {
    @TempDir
    Path dir;

    @Test
    void aNodeToldItIsNotAMemberStopsAndSaysSo() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3", "n4"))) {
            group.start(n -> { });
            RaftNode leader = group.awaitOneLeader();
            String removed = leader.nodeId().equals("n4") ? "n3" : "n4";
            TestGroup.put(leader, "before").join();
            leader.membership().removeVoter(removed);
            RaftNode evicted = group.node(removed);
            await("the removed node stops").atMost(Duration.ofSeconds(60)).until(() -> evicted.failureReason().isPresent());
            String reason = evicted.failureReason().orElseThrow();
            assertTrue(reason.contains("not in the group's configuration") && reason.contains("add-node"), reason);
            assertTrue(evicted.failure().orElseThrow() instanceof GroupClosedException,
                    "a closed group, not a store failure: " + evicted.failure().orElseThrow());
            TestGroup.put(leader, "after").join();
        }
    }
}
