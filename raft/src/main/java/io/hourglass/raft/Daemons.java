package io.hourglass.raft;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** The raft module's background threads: daemons, named for thread dumps. */
final class Daemons {
    private Daemons() {
    }

    /** A single-thread scheduler whose thread is a daemon called {@code name}. */
    static ScheduledExecutorService scheduler(String name) {
        return Executors.newSingleThreadScheduledExecutor(daemon(name));
    }

    /**
     * A single-thread executor whose daemon thread, called {@code name}, ends after {@code idleSeconds}
     * without work and is started again by the next task: an idle lane holds no thread.
     */
    static ExecutorService lane(String name, long idleSeconds) {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, idleSeconds, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                daemon(name));
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** Makes daemon threads called {@code name}. */
    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
