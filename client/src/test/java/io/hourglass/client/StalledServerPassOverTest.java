package io.hourglass.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server the stall watch found silent (a paused leader) is passed over while the others elect a
 * new leader and answer UNAVAILABLE meanwhile: the round-robin and a follower's stale leader hint
 * used to send calls straight back to it, each to wait out another stall timeout, until the pause
 * ended (the chaos run's pause faults: publishes held for the whole 4 s pause in 11 of 28).
 */
@Timeout(30)
class StalledServerPassOverTest {
    private static final Duration STALL_TIMEOUT = Duration.ofMillis(400);

    private final FakeBroker[] brokers = new FakeBroker[3];
    private ServerPool pool;
    private ScheduledExecutorService timer;
    private StallWatch watch;

    @BeforeEach
    void start() throws Exception {
        for (int i = 0; i < brokers.length; i++) {
            brokers[i] = new FakeBroker();
        }
        pool = new ServerPool(List.of(ServerAddress.parse(brokers[0].address()), ServerAddress.parse(brokers[1].address()),
                ServerAddress.parse(brokers[2].address())), FakeBroker.channels());
        timer = Executors.newSingleThreadScheduledExecutor();
        watch = new StallWatch(pool, STALL_TIMEOUT, timer);
    }

    @AfterEach
    void stop() {
        watch.close();
        timer.shutdownNow();
        pool.close();
        for (FakeBroker b : brokers) {
            b.close();
        }
    }

    /** Finds server 0 stalled the way a waiting call does. */
    private void stallTheFirstServer() {
        brokers[0].questionsHang = true;
        ServerPool.Endpoint first = pool.current();
        assertEquals(0, first.index());
        AtomicBoolean moved = new AtomicBoolean();
        watch.watch(new StallWatch.Watched() {
            @Override
            public ServerPool.Endpoint endpoint() {
                return first;
            }

            @Override
            public long sinceNanos() {
                return System.nanoTime() - TimeUnit.SECONDS.toNanos(1);
            }

            @Override
            public void stalled() {
                moved.set(true);
            }
        });
        await().atMost(Duration.ofSeconds(10)).untilTrue(moved);
        assertEquals(1, pool.current().index());
    }

    @Test
    void theRoundRobinSkipsTheStalledServerWhileTheOthersAreUnavailable() {
        stallTheFirstServer();
        ServerPool.Endpoint[] all = {null, pool.current(), null};
        pool.failover(all[1]); // no leader yet: server 1 answers UNAVAILABLE
        all[2] = pool.current();
        assertEquals(2, all[2].index());
        pool.failover(all[2]); // and so does server 2
        assertEquals(1, pool.current().index(), "not back to the paused server 0");
        assertTrue(pool.passedOver(pool.endpointOf(brokers[0].address())));
    }

    @Test
    void aStaleLeaderHintNamingTheStalledServerIsNotFollowed() {
        stallTheFirstServer();
        ServerPool.Endpoint second = pool.current();
        assertFalse(pool.failover(second, brokers[0].address()), "the hint names the paused server");
        assertEquals(2, pool.current().index());
    }

    @Test
    void theStalledServerIsUsedAgainOnceThePassOverIsOver() {
        stallTheFirstServer();
        ServerPool.Endpoint paused = pool.endpointOf(brokers[0].address());
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !pool.passedOver(paused)); // PASS_OVER_TIMEOUTS stall timeouts later
        pool.failover(pool.current());
        pool.failover(pool.current());
        assertEquals(0, pool.current().index(), "the round-robin comes back to it");
    }

    @Test
    void whenEveryOtherServerIsPassedOverTooTheRoundRobinGoesOn() {
        stallTheFirstServer();
        pool.stalled(pool.current(), TimeUnit.MINUTES.toNanos(1)); // server 1 as well
        assertEquals(2, pool.current().index());
        pool.stalled(pool.current(), TimeUnit.MINUTES.toNanos(1)); // and server 2: all three
        assertEquals(0, pool.current().index(), "nowhere better to go: the next one");
    }
}
