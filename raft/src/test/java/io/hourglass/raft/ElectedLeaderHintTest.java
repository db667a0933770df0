package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Between winning its election and having applied the entries of earlier terms (tens of ms), a
 * node is Raft's leader but not ready to serve. It must not name itself as the leader then: a
 * client told "not the leader, the leader is you" by the server it asked moved on to the others
 * and came back hundreds of ms later (a consumer after a kill -9 of the leader: ~350 ms). Real
 * three-node groups; each node's hint and readiness are read in a tight loop through failovers
 * until that window has been seen at least once.
 */
@Timeout(180)
class ElectedLeaderHintTest extends GroupTest {
    private static final int MAX_FAILOVERS = 6;

    @Test
    void aNodeElectedButNotReadyNamesNoLeaderRatherThanItself() throws IOException {
        group = new TestGroup(dir, List.of("n1", "n2", "n3")).start(node -> { });
        int windowsSeen = 0;
        for (int failover = 1; failover <= MAX_FAILOVERS && windowsSeen == 0; failover++) {
            RaftNode leader = group.awaitOneLeader();
            for (int i = 0; i < 200; i++) {
                TestGroup.put(leader, "entry " + i); // entries for the next leader to apply
            }
            String stopped = leader.nodeId();
            group.close(stopped);
            long deadline = System.nanoTime() + 60_000_000_000L;
            boolean ready = false;
            while (!ready && System.nanoTime() < deadline) {
                for (RaftNode node : List.copyOf(group.nodes().values())) {
                    boolean elected = node.nodeId().equals(node.status().leaderId());
                    String hint = node.leaderHint(); // read before readiness: readiness only grows within a term
                    boolean leading = node.isLeader();
                    if (elected && !leading) {
                        windowsSeen++;
                        assertNull(hint, node.nodeId() + " named itself the leader before it was ready");
                    }
                    ready |= leading;
                    Thread.onSpinWait();
                }
            }
            assertTrue(ready, "no survivor became ready to lead");
            group.open(stopped).start();
        }
        assertTrue(windowsSeen > 0, "never saw an elected leader before it was ready in " + MAX_FAILOVERS + " failovers");
    }
}
