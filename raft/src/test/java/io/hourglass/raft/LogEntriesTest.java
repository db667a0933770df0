package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.raftlog.RaftLog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a real 3-node group writes to its Raft log for the proposals it commits: nothing of Ratis'
 * own per commit. Its commit-index metadata entries were replicated and fsynced like a proposal,
 * so at a paced load each publish cost two append rounds on every voter.
 */
@Timeout(120)
class LogEntriesTest {
    @TempDir
    Path dir;

    @Test
    void committingProposalsAppendsNoCommitIndexMetadataEntries() throws Exception {
        // Heartbeats every 2 s: a follower that learnt of a commit only from the next one would be late.
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"),
                Map.of("raft.electionTimeoutMin", "4s", "raft.electionTimeoutMax", "5s")).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            RaftLog log = leader.server().getDivision(RaftNode.GROUP_ID).getRaftLog();
            TestGroup.put(leader, "first").get(10, TimeUnit.SECONDS);
            long before = log.getLastEntryTermIndex().getIndex();
            for (int i = 0; i < 30; i++) { // one at a time: each commit would have added its own entry
                TestGroup.put(leader, "m" + i).get(10, TimeUnit.SECONDS);
            }
            long last = log.getLastEntryTermIndex().getIndex();
            assertEquals(30, last - before, "30 proposals, 30 entries");
            for (long i = before + 1; i <= last; i++) {
                assertFalse(log.get(i).hasMetadataEntry(), "entry " + i + " is a commit-index metadata entry");
            }
            // Without them a follower still hears of each commit at once (an empty append carries it).
            long committed = TestGroup.put(leader, "last").thenApply(r -> log.getLastCommittedIndex()).get(10, TimeUnit.SECONDS);
            for (RaftNode node : group.nodes().values()) {
                org.awaitility.Awaitility.await(node.nodeId() + " applies the last commit").atMost(Duration.ofMillis(500))
                        .pollInterval(Duration.ofMillis(10)).until(() -> node.status().appliedIndex() >= committed);
            }
        }
    }
}
