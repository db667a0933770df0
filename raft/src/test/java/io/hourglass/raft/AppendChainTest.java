package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A follower whose Ratis append chain holds a failed append (as the "Already running a method"
 * race left one in CI), in a real three-node group: without {@link AppendChain} every later append
 * to it fails and it never applies another entry; with it, the node catches up and holds what the
 * leader holds.
 */
@Timeout(120)
class AppendChainTest extends GroupTest {
    @Test
    void aFollowerWhoseAppendFailedCatchesUpAndCountsTheMend() throws IOException {
        group = new TestGroup(dir, List.of("n1", "n2", "n3")).start(node -> { });
        RaftNode leader = group.awaitOneLeader();
        String followerId = group.nodes().keySet().stream().filter(id -> !id.equals(leader.nodeId())).findFirst().orElseThrow();
        RaftNode follower = group.node(followerId);
        for (int i = 0; i < 10; i++) {
            TestGroup.put(leader, "before-" + i).join();
        }
        long before = leader.status().commitIndex();
        await().atMost(Duration.ofSeconds(30)).until(() -> follower.status().appliedIndex() >= before);
        assertTrue(follower.appendChain().available(), "Ratis' append chain is reachable (moved in a Ratis upgrade?)");

        follower.appendChain().replaceTail(CompletableFuture.failedFuture(
                new IllegalStateException("a failed append, as the race leaves one")));
        for (int i = 0; i < 50; i++) {
            TestGroup.put(leader, "after-" + i).join();
        }
        long committed = leader.status().commitIndex();
        await("follower " + followerId + " applies what was committed up to " + committed)
                .atMost(Duration.ofSeconds(30)).until(() -> follower.status().appliedIndex() >= committed);
        await("holds what the leader holds").atMost(Duration.ofSeconds(30)).until(() ->
                group.store(followerId).digest().equals(group.store(leader.nodeId()).digest()));
        assertTrue(follower.counters().appendChainMends() >= 1, "the mend is counted");
    }
}
