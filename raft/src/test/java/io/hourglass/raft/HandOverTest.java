package io.hourglass.raft;

import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real 3-node group whose election timeout (8–9 s) is far longer than the test waits, with the
 * leader-exit election off: a leader that closes (SIGTERM) hands its leadership over first, so a
 * new leader is there as soon as the old one has closed.
 */
@Timeout(120)
class HandOverTest {
    @TempDir
    Path dir;

    @Test
    void aClosingLeaderLeavesANewLeaderBehind() throws Exception {
        Map<String, String> settings = Map.of("raft.electionTimeoutMin", "8s", "raft.electionTimeoutMax", "9s",
                "raft.leaderExitStagger", "0ms", "raft.handOverTimeout", "5s");
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), settings).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            for (int i = 0; i < 50; i++) {
                TestGroup.put(leader, "m" + i).get();
            }
            String id = group.nodes().entrySet().stream().filter(e -> e.getValue() == leader).findFirst()
                    .orElseThrow().getKey();
            group.close(id);
            await("a new leader right after the old one closed").atMost(Duration.ofSeconds(2))
                    .pollInterval(Duration.ofMillis(10))
                    .until(() -> group.nodes().values().stream().anyMatch(RaftNode::isLeader));
            RaftNode next = group.nodes().values().stream().filter(RaftNode::isLeader).findFirst().orElseThrow();
            TestGroup.put(next, "after").get();
        }
    }
}
