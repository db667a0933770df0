package io.hourglass.raft;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A follower whose data directory is wiped and that restarts under its old id, in a real
 * three-node group, while the leader still holds the entries after the index the follower had
 * matched: Ratis' leader keeps sending from that index and the empty follower refuses every
 * append, forever, unless the follower notices ({@link LostLogWatch}) and asks the leader to step
 * down. Wiped twice in a row, as the chaos run's wipe nemesis once did within 9 s.
 */
@Timeout(240)
class WipedFollowerTest extends GroupTest {
    @Test
    void aFollowerWipedAfterItMatchedEntriesCatchesUpAndIsReady() throws IOException {
        group = new TestGroup(dir, List.of("n1", "n2", "n3")).start(node -> { });
        RaftNode first = group.awaitOneLeader();
        String followerId = group.nodes().keySet().stream().filter(id -> !id.equals(first.nodeId())).findFirst().orElseThrow();
        for (int round = 0; round < 2; round++) {
            RaftNode leader = group.awaitOneLeader();
            for (int i = 0; i < 10; i++) {
                TestGroup.put(leader, "before-" + round + "-" + i).join();
            }
            long before = leader.status().commitIndex();
            await().atMost(Duration.ofSeconds(30)).until(() -> group.node(followerId).status().appliedIndex() >= before);
            group.close(followerId);
            group.wipe(followerId);
            for (int i = 0; i < 5; i++) {
                TestGroup.put(leader, "after-" + round + "-" + i).join();
            }
            RaftNode follower = group.open(followerId);
            follower.start();
            long committed = leader.status().commitIndex();
            await("wiped follower " + followerId + " (round " + round + ") applies what was committed up to " + committed)
                    .atMost(Duration.ofSeconds(60)).until(() -> follower.status().appliedIndex() >= committed);
            await("and calls itself ready").atMost(Duration.ofSeconds(30)).until(() -> follower.readiness().ready());
            await("holds what the leader holds").atMost(Duration.ofSeconds(30)).until(() ->
                    group.store(followerId).digest().equals(group.store(leader.nodeId()).digest()));
        }
    }
}
