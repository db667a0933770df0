package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** How Ratis' leadership callbacks, in any order they can arrive, become published changes. */
class LeadershipTrackerTest {
    private final LeadershipTracker tracker = new LeadershipTracker("n1");

    private static void published(Optional<Leadership> change, long epoch, long term, boolean leading, String leader) {
        assertEquals(Optional.of(new Leadership(epoch, term, leading, leader)), change);
    }

    @Test
    void electedLeaderLeadsOnlyOnceReadyAndOncePerTerm() {
        published(tracker.leaderChanged(3, "n1"), 1, 3, false, "n1");
        published(tracker.ready(3), 2, 3, true, "n1");
        assertTrue(tracker.ready(3).isEmpty(), "ready twice is one change");
        assertTrue(tracker.leaderChanged(3, "n1").isEmpty(), "a late leader-changed does not undo leading");
    }

    @Test
    void stepDownToAHigherTermThenTheNewLeaderIsLearned() {
        tracker.leaderChanged(3, "n1");
        tracker.ready(3);
        published(tracker.steppedDown(4), 3, 4, false, null);
        published(tracker.leaderChanged(4, "n2"), 4, 4, false, "n2");
    }

    @Test
    void stepDownInTheSameTermIsFinalForThatTerm() {
        tracker.leaderChanged(3, "n1");
        tracker.ready(3);
        published(tracker.steppedDown(3), 3, 3, false, null);
        assertTrue(tracker.ready(3).isEmpty());
        published(tracker.leaderChanged(5, "n1"), 4, 5, false, "n1");
        published(tracker.ready(5), 5, 5, true, "n1");
    }

    @Test
    void readyArrivingAfterTheStepDownThatFollowedItIsStale() {
        tracker.leaderChanged(3, "n1");
        published(tracker.steppedDown(3), 2, 3, false, null); // deposed before it was ready
        assertTrue(tracker.ready(3).isEmpty(), "the apply thread's late ready of term 3");
        tracker.leaderChanged(4, "n2");
        assertTrue(tracker.ready(3).isEmpty());
        assertTrue(tracker.leaderChanged(3, "n3").isEmpty(), "an older term");
    }

    @Test
    void unknownTermMeansTheCurrentOne() {
        tracker.leaderChanged(7, "n2");
        published(tracker.leaderChanged(-1, "n2").or(() -> tracker.steppedDown(-1)), 2, 7, false, null);
    }

    @Test
    void closingAFollowerThatKnowsNoLeaderPublishesNothing() {
        assertTrue(tracker.steppedDown(-1).isEmpty(), "nothing visible changed");
        published(tracker.leaderChanged(1, "n2"), 1, 1, false, "n2");
    }
}
