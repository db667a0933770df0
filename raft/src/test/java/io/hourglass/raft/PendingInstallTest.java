package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A wiped follower that downloaded the leader's checkpoint while that leader sends no further
 * install notification, in a real three-node group. Ratis installs a fetched checkpoint only on
 * the next notification; a CI chaos run saw a leader send none for 70 s, the node behind all along.
 * Here every leader's log appender notifies at most once ({@link
 * InstallNudgingAppender#oneNotificationPerAppender}), as one that waits forever for a lost reply
 * would: the follower must notice ({@link PendingInstallWatch}) and have a new leader, whose first
 * notification installs it.
 */
@Timeout(240)
class PendingInstallTest extends GroupTest {
    @AfterEach
    void resetTheHook() {
        InstallNudgingAppender.oneNotificationPerAppender = false;
    }

    @Test
    void aDownloadedCheckpointTheLeaderNeverInstallsMakesTheFollowerAskForANewLeader() throws IOException {
        InstallNudgingAppender.oneNotificationPerAppender = true;
        group = new TestGroup(dir, List.of("n1", "n2", "n3"), Map.of("raft.snapshotEveryEntries", "100",
                "raft.purgeGap", "1", "raft.lostLogTimeout", "2s", "raft.logSegmentBytes", Integer.toString(64 << 10)))
                .start(node -> { });
        RaftNode leader = group.awaitOneLeader();
        String followerId = group.nodes().keySet().stream().filter(id -> !id.equals(leader.nodeId()))
                .findFirst().orElseThrow();
        for (int i = 0; i < 150; i++) {
            // 2 KB each: the 64 KB segments fill and close, and only closed segments are purged.
            TestGroup.put(leader, "before-" + i + "-" + "x".repeat(2_000)).join();
        }
        long before = leader.status().commitIndex();
        await("every node applied " + before).atMost(Duration.ofSeconds(30)).until(() ->
                group.nodes().values().stream().allMatch(n -> n.status().appliedIndex() >= before));
        await("every node purged its log").atMost(Duration.ofSeconds(30))
                .ignoreException(java.io.UncheckedIOException.class).until(() ->
                        group.nodes().values().stream().allMatch(n -> TestGroup.logStart(n) > 0));

        group.close(followerId);
        group.wipe(followerId);
        for (int i = 0; i < 20; i++) {
            TestGroup.put(leader, "after-" + i).join();
        }
        RaftNode follower = group.open(followerId);
        follower.start();
        long committed = leader.status().commitIndex();
        await("wiped follower " + followerId + " installs a checkpoint and applies what was committed up to "
                + committed).atMost(Duration.ofSeconds(90)).until(() -> follower.status().appliedIndex() >= committed);
        assertTrue(follower.counters().pendingInstallStepDownRequests() >= 1,
                "the follower asked for a new leader to install its checkpoint");
        group.awaitFollowsAgain(followerId, group.awaitOneLeader(), "last");
    }
}
