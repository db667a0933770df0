package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Planned leadership transfers while proposals pour into the leader: each one elects the node it
 * names. Elections otherwise take 8-9 s here, so a transferee that loses its election (its log one
 * entry short, because an entry was appended after the leader judged it caught up) fails the test
 * instead of costing the group an election timeout without a leader.
 */
@Timeout(180)
class TransferUnderLoadTest {
    private static final Map<String, String> SLOW_ELECTIONS = Map.of("raft.electionTimeoutMin", "8s",
            "raft.electionTimeoutMax", "9s", "raft.leaderExitStagger", "0ms");
    private static final List<String> IDS = List.of("n1", "n2", "n3");

    @TempDir
    Path dir;

    /**
     * What a transfer does right before Ratis compares the transferee's log with its own: the leader
     * holds new proposals back, and waits until everything already in its log is committed.
     */
    @Test
    void aHeldLeaderAppendsNothingUntilReleasedAndHoldsOnlyOnceItsLogIsCommitted() throws Exception {
        try (TestGroup group = new TestGroup(dir, IDS, SLOW_ELECTIONS).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            TestGroup.put(leader, "warm").get(30, TimeUnit.SECONDS);
            CompletableFuture<?> inFlight = TestGroup.put(leader, "in flight");
            Runnable release = leader.proposer.hold(5_000);
            long last = lastIndex(leader);
            // Everything proposed is committed; after it at most the commit-index metadata entry
            // Ratis appends on each commit (committed with the next entry).
            var log = leader.server().getDivision(RaftNode.GROUP_ID).getRaftLog();
            long proposed = last;
            while (log.get(proposed).hasMetadataEntry()) {
                proposed--;
            }
            assertTrue(log.getLastCommittedIndex() >= proposed, "hold returned with entry " + proposed
                    + " not committed (commit index " + log.getLastCommittedIndex() + ")");
            inFlight.get(10, TimeUnit.SECONDS);
            CompletableFuture<?> held = TestGroup.put(leader, "held");
            // Ratis may still append the commit-index metadata entry of the last commit: not a proposal.
            await("nothing appended while held").during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
                    .until(() -> firstProposalAfter(leader, last) < 0 && !held.isDone());
            release.run();
            held.get(10, TimeUnit.SECONDS);
            long first = firstProposalAfter(leader, last);
            assertTrue(first > last && log.get(first).hasStateMachineLogEntry(),
                    "the held proposal went into the log once released");
        }
    }

    /** The index of the first entry after {@code after} that is not Ratis' own metadata, or -1. */
    private static long firstProposalAfter(RaftNode node, long after) throws java.io.IOException {
        var log = node.server().getDivision(RaftNode.GROUP_ID).getRaftLog();
        for (long i = after + 1; i <= lastIndex(node); i++) {
            if (!log.get(i).hasMetadataEntry()) {
                return i;
            }
        }
        return -1;
    }

    private static long lastIndex(RaftNode node) throws java.io.IOException {
        return node.server().getDivision(RaftNode.GROUP_ID).getRaftLog().getLastEntryTermIndex().getIndex();
    }

    @Test
    void everyTransferUnderLoadElectsItsTransfereeAndNoProposalFails() throws Exception {
        try (TestGroup group = new TestGroup(dir, IDS, SLOW_ELECTIONS).start(n -> { })) {
            group.awaitOneLeader();
            List<CompletableFuture<?>> made = new CopyOnWriteArrayList<>();
            ScheduledExecutorService proposer = Executors.newSingleThreadScheduledExecutor();
            try {
                proposer.scheduleAtFixedRate(() -> {
                    RaftNode via = group.nodes().values().stream().filter(RaftNode::isLeader).findFirst()
                            .orElse(group.node("n1"));
                    made.add(TestGroup.put(via, "p" + made.size()));
                }, 0, 5, TimeUnit.MILLISECONDS);
                for (int i = 0; i < 12; i++) {
                    RaftNode leader = group.awaitOneLeader();
                    String target = IDS.get((IDS.indexOf(leader.nodeId()) + 1) % IDS.size());
                    leader.admin().transferLeadership(target, Duration.ofSeconds(5));
                    await(target + " leads after transfer " + i).atMost(Duration.ofSeconds(3))
                            .until(() -> group.node(target).isLeader());
                }
            } finally {
                proposer.shutdownNow();
            }
            java.util.Map<String, Long> failures = new java.util.TreeMap<>();
            for (CompletableFuture<?> f : made) {
                try {
                    f.get(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    String why = String.valueOf(e.getCause() != null ? e.getCause() : e);
                    failures.merge(why.substring(0, Math.min(160, why.length())), 1L, Long::sum);
                }
            }
            assertEquals(Map.of(), failures, "proposals that failed, among " + made.size());
        }
    }
}
