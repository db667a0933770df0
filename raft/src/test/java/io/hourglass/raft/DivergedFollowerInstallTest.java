package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.server.raftlog.RaftLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A deposed leader that comes back with a tail of entries nobody else has, to a new leader whose
 * log now starts inside that tail, in a real three-node group.
 *
 * <p>Ratis starts a new log segment at every new term, so the new leader's first entry opens a
 * segment and its first purge leaves its log starting exactly there: where the old leader's
 * uncommitted tail starts too. The old leader needs a checkpoint (the entry before the new
 * leader's start is gone), and is told so once. While it fetches, it answers every append with
 * "installation in progress, my next index is the end of my tail"; the leader takes that index,
 * which its log holds, and never notifies again — yet Ratis finishes a fetched install only when
 * the next notification arrives. Seen in the chaos run (clock-skew fault): the node stayed behind
 * for good. {@link InstallNudgingAppender} notifies again once such a follower has matched nothing
 * for a while.
 */
@Timeout(240)
class DivergedFollowerInstallTest extends GroupTest {
    @Test
    void aDeposedLeaderWithATailPastTheNewLeadersLogStartInstallsACheckpointAndCatchesUp() throws IOException {
        group = new TestGroup(dir, List.of("n1", "n2", "n3"), Map.of("raft.snapshotEveryEntries", "100",
                "raft.purgeGap", "1",
                // Long enough for the leader, once both followers are closed, to append a tail before it
                // notices it is cut off (ContactGuard refuses proposals after 0.45 of the minimum).
                "raft.electionTimeoutMin", "4s", "raft.electionTimeoutMax", "8s")).start(node -> { });
        RaftNode old = group.awaitOneLeader();
        for (int i = 0; i < 20; i++) {
            TestGroup.put(old, "committed-" + i).join();
        }
        long common = lastIndex(old);
        List<String> others = group.nodes().keySet().stream().filter(id -> !id.equals(old.nodeId())).toList();
        await("every node holds the common entries").atMost(Duration.ofSeconds(30)).until(() ->
                others.stream().allMatch(id -> group.node(id).status().appliedIndex() >= common));
        for (String id : others) {
            group.close(id);
        }
        for (int i = 0; i < 5; i++) {
            CompletableFuture<?> never = TestGroup.put(old, "uncommitted-" + i);
            never.exceptionally(e -> null);
        }
        await("the cut-off leader appended a tail of its own").atMost(Duration.ofSeconds(30))
                .until(() -> lastIndex(old) >= common + 5);
        long tailEnd = lastIndex(old);
        String oldId = old.nodeId();
        group.close(oldId);

        for (String id : others) {
            group.open(id).start();
        }
        RaftNode leader = group.awaitOneLeader();
        for (int i = 0; i < 150; i++) {
            TestGroup.put(leader, "new-term-" + i).join();
        }
        await("the new leader purged up to its own term's first segment").atMost(Duration.ofSeconds(30))
                .until(() -> TestGroup.logStart(leader) > common);
        long start = TestGroup.logStart(leader);
        assertTrue(start <= tailEnd, "the new leader's log starts at " + start + ", inside the old leader's tail ("
                + (common + 1) + ".." + tailEnd + "): the case this test is about");

        RaftNode back = group.open(oldId);
        back.start();
        long committed = leader.status().commitIndex();
        await(oldId + " installs a checkpoint and applies what was committed up to " + committed)
                .atMost(Duration.ofSeconds(60)).until(() -> back.status().appliedIndex() >= committed);
        group.awaitFollowsAgain(oldId, leader, "after");
    }

    private static RaftLog log(RaftNode node) throws IOException {
        return node.server().getDivision(RaftNode.GROUP_ID).getRaftLog();
    }

    private static long lastIndex(RaftNode node) throws IOException {
        return log(node).getLastEntryTermIndex().getIndex();
    }
}
