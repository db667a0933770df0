package io.hourglass.raft;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new node can answer "already exists" to an add of a group whose first add then fails, leaving it
 * without the group. A voter in that state refuses every append and never catches up (and a group with a
 * short log counts it as caught up at once), so adding a voter first makes sure its node runs the group,
 * giving it the group again if it dropped it.
 */
@Timeout(120)
class AddedVoterGroupTest {
    @TempDir
    Path dir;

    @Test
    void aNewNodeThatDroppedTheGroupIsGivenItAgainAndFollows() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"))) {
            group.start(n -> { });
            RaftNode leader = group.awaitOneLeader();
            TestGroup.put(leader, "before the new node").join();
            group.openJoiner("j1").start();

            RaftPeer j1 = RaftPeer.newBuilder().setId("j1").setAddress("127.0.0.1:" + group.port("j1")).build();
            List<RaftPeer> peers = new ArrayList<>(leader.membership().currentPeers());
            peers.add(j1);
            // j1 has no group, as after its add failed behind an "already exists" answer.
            leader.membership().awaitGroupRunning(j1, peers);
            leader.membership().setVoters(peers);

            group.awaitFollowsAgain("j1", leader, "after the new node");
        }
    }
}
