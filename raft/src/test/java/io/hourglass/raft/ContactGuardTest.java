package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.UnavailableException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link ContactGuard} on a manual clock: a node out of touch past the bound fails its proposals. */
class ContactGuardTest {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final AtomicReference<String> why = new AtomicReference<>();
    private final AtomicBoolean reachable = new AtomicBoolean(false);
    private final ContactGuard guard = new ContactGuard("n2", why::get, reachable::get, Duration.ofMillis(750),
            now::get, false);

    private void advanceMs(long ms) {
        now.addAndGet(ms * 1_000_000);
        guard.tick();
    }

    @Test
    void outOfTouchWithinTheBoundFailsNothingAFailoverIsWaitedFor() {
        CompletableFuture<String> proposal = guard.track(new CompletableFuture<>());
        why.set("no leader known");
        advanceMs(100);
        advanceMs(600);
        assertFalse(proposal.isDone(), "a 700 ms gap (a failover) is waited for");
        assertNull(guard.refusal());
        why.set(null);
        advanceMs(100);
        advanceMs(800);
        assertFalse(proposal.isDone());
        proposal.complete("committed");
    }

    @Test
    void outOfTouchPastTheBoundButWithAReachableMajorityWaitsForTheElection() {
        CompletableFuture<String> proposal = guard.track(new CompletableFuture<>());
        reachable.set(true); // the leader is paused or gone; the other follower answers
        why.set("no append from leader n1 for 2000 ms");
        for (int i = 0; i < 20; i++) {
            advanceMs(100);
        }
        assertFalse(proposal.isDone(), "the reachable majority elects a leader; the proposal waits for it");
        assertNull(guard.refusal());
    }

    @Test
    void pastTheBoundWaitingProposalsFailUnavailableAndNewOnesAtOnceUntilInTouchAgain() {
        CompletableFuture<String> proposal = guard.track(new CompletableFuture<>());
        why.set("no append from leader n1 for 800 ms");
        advanceMs(400);
        advanceMs(400);
        ExecutionException failed = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                proposal::get);
        UnavailableException u = assertInstanceOf(UnavailableException.class, failed.getCause());
        assertTrue(u.getMessage().contains("n2 is cut off") && u.getMessage().contains("reaches no majority")
                        && u.getMessage().contains("try another server"),
                u.getMessage());
        assertNotNull(guard.refusal(), "new proposals fail at once");
        why.set(null);
        advanceMs(100);
        assertNull(guard.refusal(), "in touch again");
    }

    @Test
    void listenersHearOnceWhenTheNodeIsCutOffAndOnceWhenItIsInTouchAgain() {
        java.util.List<Boolean> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        guard.addCutOffListener(heard::add);
        why.set(null);
        advanceMs(100); // in touch once: what follows is news
        why.set("leading, but only 1 of 3 voters answered within 250 ms");
        for (int i = 0; i < 10; i++) {
            advanceMs(100);
        }
        assertEquals(java.util.List.of(true), heard, "told once, however long it lasts");
        reachable.set(true);
        advanceMs(100);
        assertEquals(java.util.List.of(true, false), heard, "a majority reachable again");
        reachable.set(false);
        for (int i = 0; i < 3; i++) {
            advanceMs(100);
        }
        why.set(null);
        advanceMs(100);
        assertEquals(java.util.List.of(true, false, true, false), heard, "cut off again, then in touch");
    }
}
