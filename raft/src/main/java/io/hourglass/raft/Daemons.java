package io.hourglass.raft;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/** The raft module's background threads: daemons, named for thread dumps. */
final class Daemons {
    private Daemons() {
    }

    /** A single-thread scheduler whose thread is a daemon called {@code name}. */
    static ScheduledExecutorService scheduler(String name) {
        return Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }
}
