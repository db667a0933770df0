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

/** The stall watch against in-process servers that stop answering its question, or keep answering it. */
@Timeout(30)
class StallWatchTest {
    private FakeBroker paused;
    private FakeBroker healthy;
    private ServerPool pool;
    private ScheduledExecutorService timer;
    private StallWatch watch;

    @BeforeEach
    void start() throws Exception {
        paused = new FakeBroker();
        healthy = new FakeBroker();
        pool = new ServerPool(List.of(ServerAddress.parse(paused.address()), ServerAddress.parse(healthy.address())),
                FakeBroker.channels());
        timer = Executors.newSingleThreadScheduledExecutor();
        watch = new StallWatch(pool, Duration.ofMillis(400), timer);
    }

    @AfterEach
    void stop() {
        watch.close();
        timer.shutdownNow();
        pool.close();
        paused.close();
        healthy.close();
    }

    private static final class Call implements StallWatch.Watched {
        final ServerPool.Endpoint endpoint;
        final long since;
        final AtomicBoolean stalled = new AtomicBoolean();

        Call(ServerPool.Endpoint endpoint, long since) {
            this.endpoint = endpoint;
            this.since = since;
        }

        @Override
        public ServerPool.Endpoint endpoint() {
            return endpoint;
        }

        @Override
        public long sinceNanos() {
            return since;
        }

        @Override
        public void stalled() {
            stalled.set(true);
        }
    }

    /**
     * A call made on a server after the question that finds it stalled went out moves with the
     * others at that verdict: before, it waited for a question of its own, a whole timeout more
     * (a publish on a paused leader took 2.5 s instead of 1.5).
     */
    @Test
    void theVerdictMovesEveryCallOnTheStalledServerTheNewestToo() {
        ServerPool.Endpoint first = pool.current();
        paused.questionsHang = true;
        Call old = new Call(first, System.nanoTime() - TimeUnit.SECONDS.toNanos(1));
        Call fresh = new Call(first, System.nanoTime() + TimeUnit.HOURS.toNanos(1)); // never waiting long enough itself
        ServerPool.Endpoint second = new ServerPool.Endpoint(1, ServerAddress.parse(healthy.address()), null);
        Call elsewhere = new Call(second, System.nanoTime() + TimeUnit.HOURS.toNanos(1)); // asks nothing
        watch.watch(old);
        watch.watch(fresh);
        watch.watch(elsewhere);

        await().atMost(Duration.ofSeconds(10)).untilTrue(old.stalled);
        assertTrue(fresh.stalled.get(), "the newest call on the stalled server moved with the verdict");
        assertFalse(elsewhere.stalled.get(), "a call on another server stays");
        assertEquals(1, watch.stalls());
        assertEquals(1, pool.current().index(), "new calls go to the next server");
    }

    @Test
    void aServerThatAnswersKeepsItsCalls() {
        Call old = new Call(pool.current(), System.nanoTime() - TimeUnit.SECONDS.toNanos(1));
        watch.watch(old);
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> !old.stalled.get());
        assertEquals(0, watch.stalls());
    }
}
