package io.hourglass.server;

import io.hourglass.core.command.Replicator;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import java.util.concurrent.CompletableFuture;

/** A {@link Replicator} that records how long each proposal takes to commit and apply. */
final class TimedReplicator implements Replicator {
    private final Replicator delegate;
    private final NodeMetrics metrics;

    TimedReplicator(Replicator delegate, NodeMetrics metrics) {
        this.delegate = delegate;
        this.metrics = metrics;
    }

    @Override
    public CompletableFuture<CommandReply> propose(Command command) {
        long start = System.nanoTime();
        return delegate.propose(command).whenComplete((r, e) -> {
            if (e == null) {
                metrics.recordPropose(System.nanoTime() - start);
            }
        });
    }

    @Override
    public boolean isLeader() {
        return delegate.isLeader();
    }

    @Override
    public boolean holdsLease() {
        return delegate.holdsLease();
    }

    @Override
    public String leaderHint() {
        return delegate.leaderHint();
    }
}
