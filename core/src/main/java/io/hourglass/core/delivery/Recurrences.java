package io.hourglass.core.delivery;

import io.hourglass.core.command.QueueCommands;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's re-arm of recurring messages (DESIGN §9): proposes one {@code FireCmd} for those
 * that fell due and have not fired; apply stores each one's next firing. Loop only; answers come
 * back through {@code loop}.
 */
final class Recurrences {
    private static final Logger LOG = LoggerFactory.getLogger(Recurrences.class);
    /** How often the leader looks for recurring messages that fell due (their period is at least 1 s). */
    static final long FIRE_INTERVAL_MS = 250;

    private final EventStore store;
    private final Replicator replicator;
    private final Clock clock;
    private final Executor loop;
    /** Recurring messages whose FireCmd is being replicated. */
    private final Set<EventKey> firing = new HashSet<>();

    Recurrences(EventStore store, Replicator replicator, Clock clock, Executor loop) {
        this.store = store;
        this.replicator = replicator;
        this.clock = clock;
        this.loop = loop;
    }

    /** Proposes the FireCmd of what fell due; returns how many messages it named. */
    int fireDue() {
        List<EventKey> due = new ArrayList<>();
        store.queue().scanRecurringDue(clock.millis(), key -> {
            if (firing.add(key)) {
                due.add(key);
            }
            return due.size() < EventKey.MAX_MESSAGES_PER_ENTRY;
        });
        if (due.isEmpty()) {
            return 0;
        }
        replicator.propose(QueueCommands.fire(due)).whenComplete((r, e) -> loop.execute(() -> {
            due.forEach(firing::remove);
            if (e != null) {
                LOG.debug("re-arming {} recurring messages not replicated ({}); tried again", due.size(), e.toString());
            }
        }));
        return due.size();
    }

    /** Leadership lost: the next leader decides. */
    void clear() {
        firing.clear();
    }
}
