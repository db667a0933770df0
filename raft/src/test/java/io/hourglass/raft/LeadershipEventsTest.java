package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.ratis.server.protocol.TermIndex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Leadership as each node's listeners see it, in a real three-node Ratis group: one leading
 * change per term, on that term's leader, only once it has applied its term's first entry; a
 * not-leading change on a leader that hands over or is closed; epochs without gaps and terms that
 * never go back. (The first leader may be elected again after the second is closed.)
 */
@Timeout(180)
class LeadershipEventsTest extends GroupTest {
    private static final List<String> IDS = List.of("n1", "n2", "n3");

    /** A change as a listener saw it, with what the node had applied at that moment. */
    private record Seen(Leadership change, TermIndex applied) {
    }

    private final Map<String, List<Seen>> seen = new HashMap<>();

    private void startCluster() throws IOException {
        group = new TestGroup(dir, IDS).start(node -> {
            List<Seen> log = new CopyOnWriteArrayList<>();
            seen.put(node.nodeId(), log);
            node.addLeadershipListener(change -> log.add(new Seen(change, node.stateMachine().getLastAppliedTermIndex())));
        });
    }

    private RaftNode awaitOneLeader() {
        return group.awaitOneLeader();
    }

    private static void put(RaftNode via, String payload) {
        TestGroup.put(via, payload).join();
    }

    private List<Leadership> changes(String id) {
        return seen.get(id).stream().map(Seen::change).toList();
    }

    @Test
    void eachTermHasOneLeadingChangeOnItsLeaderAndLeadersHearWhenTheyStop() throws IOException {
        startCluster();
        RaftNode first = awaitOneLeader();
        long firstTerm = first.leadership().term();
        put(first, "a");
        RaftNode follower = group.nodes().values().stream().filter(n -> n != first).findFirst().orElseThrow();
        put(follower, "b"); // through the Raft client to the leader

        String successorId = follower.nodeId();
        first.admin().transferLeadership(successorId, Duration.ofSeconds(20));
        RaftNode second = group.node(successorId);
        await().atMost(Duration.ofSeconds(30)).until(() -> second.isLeader() && !first.isLeader());
        long secondTerm = second.leadership().term();
        assertTrue(secondTerm > firstTerm, "a transfer starts a new term: " + firstTerm + " -> " + secondTerm);
        put(first, "c");

        group.close(successorId);
        RaftNode third = awaitOneLeader();
        long thirdTerm = third.leadership().term();
        assertTrue(thirdTerm > secondTerm, "a new election after the leader was closed: " + secondTerm + " -> " + thirdTerm);
        put(third, "d");

        assertLeadingThenNot(first.nodeId(), firstTerm);
        assertLeadingThenNot(successorId, secondTerm);
        List<Leadership> closed = changes(successorId);
        assertFalse(closed.get(closed.size() - 1).leading(), "the closed leader's last change: " + closed);
        Map<Long, List<String>> leadingByTerm = new HashMap<>();
        for (String id : IDS) {
            assertWellOrdered(id);
            for (Seen s : seen.get(id)) {
                if (s.change().leading()) {
                    leadingByTerm.computeIfAbsent(s.change().term(), t -> new ArrayList<>()).add(id);
                    assertEquals(id, s.change().leaderId());
                    assertTrue(s.applied().getTerm() >= s.change().term(), () -> id + " led in term "
                            + s.change().term() + " before applying an entry of that term: applied " + s.applied());
                }
            }
        }
        assertEquals(List.of(first.nodeId()), leadingByTerm.get(firstTerm), "leading changes of term " + firstTerm);
        assertEquals(List.of(successorId), leadingByTerm.get(secondTerm), "leading changes of term " + secondTerm);
        assertEquals(List.of(third.nodeId()), leadingByTerm.get(thirdTerm), "leading changes of term " + thirdTerm);
        leadingByTerm.forEach((term, leaders) -> assertEquals(1, leaders.size(), "term " + term + ": " + leaders));
    }

    /** {@code id} led in {@code term} exactly once, and a later change told it that it no longer does. */
    private void assertLeadingThenNot(String id, long term) {
        List<Leadership> changes = changes(id);
        List<Leadership> leading = changes.stream().filter(c -> c.leading() && c.term() == term).toList();
        assertEquals(1, leading.size(), id + ": " + changes);
        long epoch = leading.get(0).epoch();
        assertTrue(changes.stream().anyMatch(c -> !c.leading() && c.epoch() > epoch), id + " never heard it stopped leading: " + changes);
    }

    /** Epochs 1, 2, 3, … (every change heard, in order); terms never decrease. */
    private void assertWellOrdered(String id) {
        List<Leadership> changes = changes(id);
        assertFalse(changes.isEmpty(), id + " heard nothing");
        for (int i = 0; i < changes.size(); i++) {
            assertEquals(i + 1, changes.get(i).epoch(), id + ": " + changes);
            if (i > 0) {
                assertTrue(changes.get(i).term() >= changes.get(i - 1).term(), id + ": " + changes);
            }
        }
    }
}
