package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.UnavailableException;
import io.hourglass.core.proto.CommandReply;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real 3-node group in which one node's wall clock is off: replicated time never takes its
 * clock, and never goes backwards across leaders whose clocks differ within the bound.
 */
@Timeout(120)
class ClockSkewTest {
    private static final Duration FIVE_MINUTES = Duration.ofMinutes(5);

    @TempDir
    Path dir;

    @Test
    void aNodeWhoseClockIsMinutesAheadStampsNothingAndHandsTheLeadershipItIsGivenOver() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), Map.of("raft.maxClockSkew", "500ms"))
                .clock("n3", Clock.offset(Clock.systemUTC(), FIVE_MINUTES)).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            if (leader == group.node("n3")) {
                await().atMost(Duration.ofSeconds(20)).until(() -> !group.node("n3").isLeader());
                leader = group.awaitOneLeader();
            }
            TestGroup.put(leader, "before").get();
            RaftNode skewed = group.node("n3");
            await("n3 sees its clock off the others'").atMost(Duration.ofSeconds(10))
                    .until(() -> skewed.counters().clockOffsetMs() > FIVE_MINUTES.toMillis() - 1_000);
            await("n1 sees its clock in line with the majority").atMost(Duration.ofSeconds(10))
                    .until(() -> Math.abs(group.node("n1").counters().clockOffsetMs()) < 1_000);

            leader.admin().transferLeadership("n3", Duration.ofSeconds(10));
            boolean leaseWhileSkewed = false;
            List<Throwable> refused = new ArrayList<>();
            long stampsAhead = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            // Publish through the skewed node while it leads, until it has handed its leadership over.
            while (System.nanoTime() < deadline && (skewed.isLeader() || refused.isEmpty() && stampsAhead == 0)) {
                leaseWhileSkewed |= skewed.isLeader() && skewed.holdsLease();
                try {
                    CommandReply reply = (CommandReply) TestGroup.put(skewed, "during").get();
                    if (reply.getStampedAtMs() > System.currentTimeMillis() + 1_000) {
                        stampsAhead++;
                    }
                } catch (ExecutionException e) {
                    refused.add(e.getCause());
                }
                if (!skewed.isLeader() && !refused.isEmpty()) {
                    break;
                }
            }
            assertEquals(0, stampsAhead, "entries stamped with the skewed clock");
            assertFalse(leaseWhileSkewed, "the skewed leader held a lease: its dispatcher would judge what is due by its clock");
            assertFalse(refused.isEmpty(), "the skewed leader refused proposals while it led");
            for (Throwable t : refused) {
                assertInstanceOf(UnavailableException.class, t, "a refusal says UNAVAILABLE: " + t);
            }
            assertTrue(refused.stream().anyMatch(t -> t.getMessage().contains("clock")), "says why: " + refused.get(0));
            await("the skewed node handed its leadership over").atMost(Duration.ofSeconds(20))
                    .until(() -> !skewed.isLeader() && group.nodes().values().stream().anyMatch(RaftNode::isLeader));

            RaftNode next = group.awaitOneLeader();
            CommandReply after = (CommandReply) TestGroup.put(next, "after").get();
            assertTrue(after.getStampedAtMs() <= System.currentTimeMillis(), "stamped with a sound clock");
            for (String id : List.of("n1", "n2", "n3")) {
                assertTrue(group.store(id).clockMs() <= System.currentTimeMillis(), id + "'s replicated time is not ahead");
            }
        }
    }

    /**
     * The chaos run's case: a node restarted with its clock minutes ahead and made leader at once,
     * before it has read anybody's clock. It must stamp nothing: one entry stamped ahead would push
     * replicated time, which never goes backwards, minutes ahead for every later leader.
     */
    @Test
    void aNodeRestartedWithItsClockAheadAndMadeLeaderAtOnceStampsNothing() throws Exception {
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), Map.of("raft.maxClockSkew", "500ms"))
                .start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            String restarted = group.nodes().entrySet().stream().filter(e -> e.getValue() != leader).findFirst()
                    .orElseThrow().getKey();
            TestGroup.put(leader, "before").get();
            group.close(restarted);
            group.clock(restarted, Clock.offset(Clock.systemUTC(), FIVE_MINUTES));
            RaftNode skewed = group.open(restarted);
            skewed.start();
            // As soon as the leader reaches it again (its channel may still be backing off). The
            // transfer may also never succeed, once the node has judged its own clock: then it had
            // nothing to stamp, which the assertions below still check.
            try {
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).ignoreExceptions().until(() -> {
                    leader.admin().transferLeadership(restarted, Duration.ofSeconds(2));
                    return true;
                });
            } catch (org.awaitility.core.ConditionTimeoutException refused) {
                System.out.println("ClockSkewTest: " + restarted + " did not take the leadership: " + refused.getMessage());
            }
            long stampsAhead = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (System.nanoTime() < deadline && skewed.isLeader()) {
                try {
                    CommandReply reply = (CommandReply) TestGroup.put(skewed, "during").get();
                    if (reply.getStampedAtMs() > System.currentTimeMillis() + 1_000) {
                        stampsAhead++;
                    }
                } catch (ExecutionException e) {
                    assertInstanceOf(UnavailableException.class, e.getCause(), "a refusal says UNAVAILABLE");
                }
            }
            assertEquals(0, stampsAhead, "entries stamped with the clock of a node that had read nobody's yet");
            await("the skewed node handed its leadership over").atMost(Duration.ofSeconds(20))
                    .until(() -> group.nodes().values().stream().anyMatch(n -> n != skewed && n.isLeader()));
            // Serving again: within 20 s, not necessarily at the first try. CI saw one proposal time out
            // (5 s) right after the loop above had given up transferring to the node still starting:
            // Ratis refuses writes while a transfer is pending.
            await("a proposal commits after the skewed node stepped aside").atMost(Duration.ofSeconds(20))
                    .ignoreExceptions().until(() -> {
                        RaftNode next = group.nodes().values().stream().filter(n -> n != skewed && n.isLeader())
                                .findFirst().orElseThrow();
                        TestGroup.put(next, "after").get();
                        return true;
                    });
            for (String id : List.of("n1", "n2", "n3")) {
                assertTrue(group.store(id).clockMs() <= System.currentTimeMillis() + 1_000,
                        id + "'s replicated time is not ahead");
            }
        }
    }

    @Test
    void replicatedTimeNeverGoesBackwardsWhenTheNextLeadersClockIsBehindWithinTheBound() throws Exception {
        // n2's clock 400 ms behind: within raft.maxClockSkew, so it may lead, but it stamps no entry
        // below the highest stamp applied.
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), Map.of("raft.maxClockSkew", "500ms"))
                .clock("n2", Clock.offset(Clock.systemUTC(), Duration.ofMillis(-400))).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            if (leader == group.node("n2")) {
                leader.admin().transferLeadership("n1", Duration.ofSeconds(10));
                leader = group.node("n1");
            }
            long last = 0;
            for (int i = 0; i < 20; i++) {
                last = ((CommandReply) TestGroup.put(leader, "m" + i).get()).getStampedAtMs();
            }
            leader.admin().transferLeadership("n2", Duration.ofSeconds(10));
            RaftNode behind = group.node("n2");
            await().atMost(Duration.ofSeconds(10)).until(behind::isLeader);
            long first = ((CommandReply) TestGroup.put(behind, "next").get()).getStampedAtMs();
            assertTrue(first >= last, "the next leader stamped " + first + " after " + last);
            assertTrue(group.store("n2").clockMs() >= last, "the store's clock holds the highest stamp");
        }
    }

    @Test
    void aLeaderWhoseClockJumpsAheadStampsNothingWithTheJumpedClock() throws Exception {
        SteppedClock n1Clock = new SteppedClock();
        try (TestGroup group = new TestGroup(dir, List.of("n1", "n2", "n3"), Map.of("raft.maxClockSkew", "500ms"))
                .clock("n1", n1Clock).start(n -> { })) {
            RaftNode leader = group.awaitOneLeader();
            RaftNode n1 = group.node("n1");
            if (leader != n1) {
                leader.admin().transferLeadership("n1", Duration.ofSeconds(10));
                await().atMost(Duration.ofSeconds(10)).until(n1::isLeader);
            }
            // A node stamps nothing until it has read the other voters' clocks once since it started:
            // a leader elected at once refuses its first proposals (UNAVAILABLE) for a moment (CI).
            await("n1 stamps entries").atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> {
                TestGroup.put(n1, "m0").get();
                return true;
            });
            for (int i = 1; i < 10; i++) {
                TestGroup.put(n1, "m" + i).get();
            }
            n1Clock.step(FIVE_MINUTES);
            int stampsAhead = 0;
            int refused = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (System.nanoTime() < deadline && n1.isLeader()) {
                try {
                    CommandReply reply = (CommandReply) TestGroup.put(n1, "after the jump").get();
                    stampsAhead += reply.getStampedAtMs() > System.currentTimeMillis() + 1_000 ? 1 : 0;
                } catch (ExecutionException e) {
                    assertInstanceOf(UnavailableException.class, e.getCause());
                    refused++;
                }
            }
            assertEquals(0, stampsAhead, "entries stamped with the jumped clock");
            assertTrue(refused > 0, "proposals refused while the jumped leader still led");
            await("another node leads").atMost(Duration.ofSeconds(20))
                    .until(() -> group.nodes().values().stream().anyMatch(n -> n != n1 && n.isLeader()));
            for (String id : List.of("n1", "n2", "n3")) {
                assertTrue(group.store(id).clockMs() <= System.currentTimeMillis(), id + "'s replicated time is not ahead");
            }
        }
    }

    /** The system clock plus an offset a test can step. */
    private static final class SteppedClock extends Clock {
        private volatile long offsetMs;

        void step(Duration by) {
            offsetMs += by.toMillis();
        }

        @Override
        public long millis() {
            return System.currentTimeMillis() + offsetMs;
        }

        @Override
        public java.time.Instant instant() {
            return java.time.Instant.ofEpochMilli(millis());
        }

        @Override
        public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }
}
