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
    /** Elections slower than the test waits, no leader-exit election: only the hand-over can elect. */
    private static final Map<String, String> SLOW_ELECTIONS_HAND_OVER = Map.of("raft.electionTimeoutMin", "8s",
            "raft.electionTimeoutMax", "9s", "raft.leaderExitStagger", "0ms", "raft.handOverTimeout", "5s");

    @TempDir
    Path dir;

    @Test
    void aClosingLeaderLeavesANewLeaderBehind() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), SLOW_ELECTIONS_HAND_OVER).start(n -> { })) {
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

    /**
     * While the leader hands over, it refuses proposals ("stepping down"); a follower's forwarder
     * asks again as soon as the successor leads, so none of the proposals made meanwhile fails.
     * Before, each failed with "replication did not complete" and the client had to retry.
     */
    @Test
    void proposalsForwardedDuringTheHandOverAllCommit() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), SLOW_ELECTIONS_HAND_OVER).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            String id = group.nodes().entrySet().stream().filter(e -> e.getValue() == leader).findFirst()
                    .orElseThrow().getKey();
            RaftNode via = group.nodes().values().stream().filter(n -> n != leader).findFirst().orElseThrow();
            TestGroup.put(via, "warm").get();
            java.util.List<java.util.concurrent.CompletableFuture<?>> made = new java.util.concurrent.CopyOnWriteArrayList<>();
            java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
            var proposer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
            try {
                proposer.scheduleAtFixedRate(() -> made.add(TestGroup.put(via, "p" + made.size())), 0, 2,
                        java.util.concurrent.TimeUnit.MILLISECONDS);
                await().atMost(Duration.ofSeconds(10)).until(() -> made.size() > 50);
                group.close(id);
                closed.set(true);
                int upTo = made.size();
                await().atMost(Duration.ofSeconds(10)).until(() -> made.size() > upTo + 50);
            } finally {
                proposer.shutdownNow();
            }
            int failed = 0;
            String first = null;
            for (var f : made) {
                try {
                    f.get(20, java.util.concurrent.TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    failed++;
                    first = first == null ? String.valueOf(e.getCause()) : first;
                }
            }
            org.junit.jupiter.api.Assertions.assertTrue(closed.get());
            org.junit.jupiter.api.Assertions.assertEquals(0, failed, made.size() + " proposals, the first failure: " + first);
        }
    }

    /**
     * A transfer to a node that has not caught up waits for it with writes going on, and fails
     * having stopped none when it does not catch up: a transfer Ratis had started refused every write
     * until its timeout (5 s twice in a chaos run, to a node installing a checkpoint).
     */
    @Test
    void writesGoOnWhileATransferWaitsForItsTargetToCatchUp() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), SLOW_ELECTIONS_HAND_OVER).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            String down = stopAFollower(group, leader);
            Duration wait = Duration.ofSeconds(4);
            java.util.concurrent.CompletableFuture<Void> transfer = java.util.concurrent.CompletableFuture.runAsync(() -> {
                try {
                    leader.admin().transferLeadership(down, wait);
                } catch (java.io.IOException e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            long until = System.nanoTime() + wait.toNanos() - Duration.ofMillis(500).toNanos();
            int committed = 0;
            while (System.nanoTime() < until) { // each within 2 s, the whole time the transfer waits
                TestGroup.put(leader, "during-" + committed++).get(2, java.util.concurrent.TimeUnit.SECONDS);
            }
            java.util.concurrent.ExecutionException failed = org.junit.jupiter.api.Assertions.assertThrows(
                    java.util.concurrent.ExecutionException.class, () -> transfer.get(30, java.util.concurrent.TimeUnit.SECONDS));
            org.junit.jupiter.api.Assertions.assertTrue(String.valueOf(failed.getCause().getMessage())
                    .contains("writes were not stopped"), failed.getCause().toString());
            org.junit.jupiter.api.Assertions.assertTrue(leader.isLeader());
            TestGroup.put(leader, "after").get(5, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /**
     * A transfer to a node that is down fails after its one attempt (its timeout), and the leader
     * takes writes again at once. The client's retry policy used to resend the transfer up to a hundred times,
     * each pending for the timeout with every write refused: minutes without a commit.
     */
    @Test
    void aFailedTransferToANodeThatIsDownLeavesTheLeaderWriting() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), SLOW_ELECTIONS_HAND_OVER).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            String down = stopAFollower(group, leader);
            // Longer than raft.requestTimeout (5 s), the client's RPC timeout: the client used to time
            // the call out and send the transfer again, for as long as its retry policy allowed.
            long start = System.nanoTime();
            org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class,
                    () -> leader.admin().transferLeadership(down, Duration.ofSeconds(7)));
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            org.junit.jupiter.api.Assertions.assertTrue(tookMs < 12_000, "one attempt, not retried: " + tookMs + " ms");
            TestGroup.put(leader, "after").get(5, java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    /** After one committed write, stops a follower of {@code leader}; returns its id. */
    private static String stopAFollower(TestGroup group, RaftNode leader) throws Exception {
        TestGroup.put(leader, "before").get(10, java.util.concurrent.TimeUnit.SECONDS);
        String down = group.nodes().entrySet().stream().filter(e -> e.getValue() != leader).findFirst()
                .orElseThrow().getKey();
        group.close(down);
        return down;
    }
}
