package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real 3-node group whose election timeout (8–9 s) is far longer than the test waits: when the
 * leader's process is gone (its Raft server closed, its port closed), a follower elects a new
 * leader at once; when only some connection into a follower closes while the leader lives, nobody
 * starts an election.
 */
@Timeout(120)
class LeaderExitWatchTest {
    /** Slow elections, and no hand-over on close: closing the leader stands in for kill -9. */
    private static final Map<String, String> SLOW_ELECTIONS = Map.of("raft.electionTimeoutMin", "8s",
            "raft.electionTimeoutMax", "9s", "raft.leaderExitStagger", "300ms", "raft.handOverTimeout", "0ms");

    @TempDir
    Path dir;

    @Test
    void aGoneLeaderIsReplacedLongBeforeTheElectionTimeout() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), SLOW_ELECTIONS).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            for (int i = 0; i < 20; i++) {
                TestGroup.put(leader, "m" + i).get();
            }
            String gone = group.nodes().entrySet().stream().filter(e -> e.getValue() == leader).findFirst()
                    .orElseThrow().getKey();
            // Ratis closes the leader's port part way through its close, which then waits for its
            // executor (about 1 s here, longer on a busy machine): from the close's return the port
            // is surely closed, and the new leader is timed from there (0 when already elected).
            long killedAt = System.nanoTime();
            group.close(gone);
            long closedAt = System.nanoTime();
            long closeMs = (closedAt - killedAt) / 1_000_000;
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(10))
                    .until(() -> group.nodes().values().stream().anyMatch(RaftNode::isLeader));
            long tookMs = (System.nanoTime() - closedAt) / 1_000_000;
            assertTrue(tookMs < 2_000, "a new leader " + tookMs + " ms after the old one's close returned ("
                    + closeMs + " ms), long before the 8 s election timeout");
            long forced = group.nodes().values().stream().mapToLong(n -> n.counters().leaderExitElections()).sum();
            assertEquals(1, forced, "one follower started the election, the other waited and saw it win");
            RaftNode next = group.nodes().values().stream().filter(RaftNode::isLeader).findFirst().orElseThrow();
            TestGroup.put(next, "after").get(); // the new leader commits with the remaining follower
            System.out.println("LeaderExitWatchTest: new leader " + tookMs + " ms after the old one's close returned ("
                    + closeMs + " ms)");
        }
    }

    /**
     * A connection that opens and closes without a call (another node's probe, a supervisor's TCP
     * check, a port scanner) is no sign of a gone leader: no watch looks at its leader's port for it.
     * Before, each one set off a look — probes of the leader, whose closes set off the others'.
     */
    @Test
    void connectionsThatCarriedNoAppendsDoNotSetOffLooks() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), SLOW_ELECTIONS).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            TestGroup.put(leader, "m").get();
            for (int i = 0; i < 10; i++) {
                for (String id : group.nodes().keySet()) {
                    try (Socket s = new Socket()) {
                        s.connect(new InetSocketAddress("127.0.0.1", group.raftPort(id)), 2_000);
                    }
                }
            }
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
                    .until(() -> group.nodes().values().stream().mapToLong(n -> n.leaderExitWatch().closeLooks()).sum() == 0);
            assertTrue(leader.isLeader(), "the leader kept its place");
        }
    }

    private static io.hourglass.core.proto.LogEnd end(long term, long index) {
        return io.hourglass.core.proto.LogEnd.newBuilder().setTerm(term).setIndex(index).build();
    }

    private static io.hourglass.core.proto.LogEnd silent(String leader, long silentMs) {
        return end(4, 1000).toBuilder().setLeader(leader).setLeaderSilentMs(silentMs).build();
    }

    @Test
    void aSilentLeaderIsReplacedOnlyWhenAMajorityHasNotHeardFromIt() {
        List<String> three = List.of("n1", "n2", "n3");
        long silence = 1_000;
        // the other follower has not heard from n2 either (a little less long: heartbeats arrive apart)
        var both = Map.of("n1", silent("n2", 1_050), "n3", silent("n2", 930));
        assertEquals(Map.of("n1", both.get("n1"), "n3", both.get("n3")),
                LeaderExitWatch.agreeingSilent("n1", three, "n2", both, silence));
        // ... or follows no leader any more (it is a candidate)
        var none = Map.of("n1", silent("n2", 1_050), "n3", silent("", Long.MAX_VALUE));
        assertEquals(2, LeaderExitWatch.agreeingSilent("n1", three, "n2", none, silence).size());
        // the leader still talks to n3: n1 alone is cut off from it, nobody is elected
        assertNull(LeaderExitWatch.agreeingSilent("n1", three, "n2",
                Map.of("n1", silent("n2", 1_050), "n3", silent("n2", 120)), silence));
        // n1 is cut off from everybody: nobody answers
        assertNull(LeaderExitWatch.agreeingSilent("n1", three, "n2", Map.of("n1", silent("n2", 1_050)), silence));
        // n3 already follows a new leader
        assertNull(LeaderExitWatch.agreeingSilent("n1", three, "n2",
                Map.of("n1", silent("n2", 1_050), "n3", silent("n3", 5_000)), silence));
        // an older node tells no leader and 0 ms: it does not agree
        assertNull(LeaderExitWatch.agreeingSilent("n1", three, "n2",
                Map.of("n1", silent("n2", 1_050), "n3", end(4, 1000)), silence));
        // five voters: the asking follower and two more make the majority, the fourth still hears n2
        List<String> five = List.of("n1", "n2", "n3", "n4", "n5");
        var some = Map.of("n1", silent("n2", 1_100), "n3", silent("n2", 1_000), "n4", silent("n2", 980),
                "n5", silent("n2", 40));
        assertEquals(java.util.Set.of("n1", "n3", "n4"),
                LeaderExitWatch.agreeingSilent("n1", five, "n2", some, silence).keySet());
        assertNull(LeaderExitWatch.agreeingSilent("n1", five, "n2",
                Map.of("n1", silent("n2", 1_100), "n3", silent("n2", 1_000), "n5", silent("n2", 40)), silence));
    }

    @Test
    void theFollowerWhoseLogEndsLastGoesFirstThenTheIds() {
        List<String> voters = List.of("n1", "n2", "n3");
        // n1 restarted and is 400 entries behind: n3 goes first, n1 after it
        var behind = Map.of("n1", end(4, 5587), "n3", end(4, 5980));
        assertEquals(0, LeaderExitWatch.rank("n3", voters, "n2", behind));
        assertEquals(1, LeaderExitWatch.rank("n1", voters, "n2", behind));
        // one entry more decides: the other would refuse to vote for a shorter log
        assertEquals(0, LeaderExitWatch.rank("n3", voters, "n2", Map.of("n1", end(4, 1000), "n3", end(4, 1001))));
        assertEquals(1, LeaderExitWatch.rank("n1", voters, "n2", Map.of("n1", end(4, 1000), "n3", end(4, 1001))));
        // a later term beats a longer log of an earlier one
        assertEquals(0, LeaderExitWatch.rank("n1", voters, "n2", Map.of("n1", end(5, 900), "n3", end(4, 1001))));
        // the same last entry: by id, on both sides
        assertEquals(0, LeaderExitWatch.rank("n1", voters, "n2", Map.of("n1", end(4, 1000), "n3", end(4, 1000))));
        assertEquals(1, LeaderExitWatch.rank("n3", voters, "n2", Map.of("n1", end(4, 1000), "n3", end(4, 1000))));
        // a follower that did not answer counts as behind
        assertEquals(0, LeaderExitWatch.rank("n3", voters, "n2", Map.of("n3", end(4, 1000))));
        assertEquals(-1, LeaderExitWatch.rank("n2", voters, "n2", behind), "the gone leader itself");
        assertEquals(-1, LeaderExitWatch.rank("j1", voters, "n2", behind), "not a voter");
    }

    /**
     * A process being killed closes the connection that wakes the watch before, at times, its
     * listening socket: seen on this machine, the first follower's probe found the port still
     * accepting and gave up, and the election waited for the next follower's turn (+340 ms).
     */
    @Test
    void aPortThatStillAcceptsRightAfterTheCloseIsAskedAgainAFewTimes() {
        assertEquals(LeaderExitWatch.AfterProbe.GONE, LeaderExitWatch.afterProbe(TcpProbe.REFUSED, 0, 0));
        for (int recheck = 0; recheck < LeaderExitWatch.RECHECKS; recheck++) {
            assertEquals(LeaderExitWatch.AfterProbe.ASK_AGAIN, LeaderExitWatch.afterProbe(TcpProbe.ACCEPTED, 0, recheck));
        }
        assertEquals(LeaderExitWatch.AfterProbe.STOP,
                LeaderExitWatch.afterProbe(TcpProbe.ACCEPTED, 0, LeaderExitWatch.RECHECKS), "a live leader: bounded re-asks");
        assertEquals(LeaderExitWatch.AfterProbe.STOP, LeaderExitWatch.afterProbe(TcpProbe.ACCEPTED, 1, 0),
                "a later, staggered look that finds the port accepting: a process listens there again");
        assertEquals(LeaderExitWatch.AfterProbe.STOP, LeaderExitWatch.afterProbe(TcpProbe.NO_ANSWER, 0, 0));
        assertEquals(LeaderExitWatch.AfterProbe.GONE, LeaderExitWatch.afterProbe(TcpProbe.REFUSED, 0, LeaderExitWatch.RECHECKS));
    }

    @Test
    void aConnectionClosingWhileTheLeaderLivesStartsNoElection() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), SLOW_ELECTIONS).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            TestGroup.put(leader, "m").get();
            for (String id : group.nodes().keySet()) {
                if (group.node(id) != leader) {
                    for (int i = 0; i < 3; i++) {
                        try (Socket s = new Socket()) {
                            s.connect(new InetSocketAddress("127.0.0.1", group.port(id)), 1_000);
                        }
                    }
                }
            }
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4))
                    .until(() -> leader.isLeader() && group.nodes().values().stream()
                            .mapToLong(n -> n.counters().leaderExitElections()).sum() == 0);
        }
    }
}
