package io.hourglass.raft;

import io.hourglass.core.UnavailableException;
import io.hourglass.core.proto.CommandReply;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Proposals waiting for Ratis. A node that stops itself after a failure ({@link FailStop}) refuses
 * new ones and fails the waiting ones at once, with the reason, so that a client learns why and
 * tries another server instead of waiting out its timeout. Thread-safe.
 */
final class PendingProposals {
    private final Set<CompletableFuture<CommandReply>> pending = ConcurrentHashMap.newKeySet();
    private final FailStop failStop;
    private final Supplier<UnavailableException> stopped;

    /** @param stopped the failure a proposal gets once the node has stopped */
    PendingProposals(FailStop failStop, Supplier<UnavailableException> stopped) {
        this.failStop = failStop;
        this.stopped = stopped;
    }

    /** Runs {@code propose} and keeps its result until it completes. */
    CompletableFuture<CommandReply> track(Supplier<CompletableFuture<CommandReply>> propose) {
        if (failStop.tripped()) {
            return CompletableFuture.failedFuture(stopped.get());
        }
        CompletableFuture<CommandReply> reply = new CompletableFuture<>();
        pending.add(reply);
        propose.get().whenComplete((r, e) -> {
            pending.remove(reply);
            if (e != null) {
                reply.completeExceptionally(e);
            } else {
                reply.complete(r);
            }
        });
        if (failStop.tripped()) {
            failAll(); // tripped while this was being proposed
        }
        return reply;
    }

    /** Fails every proposal still waiting: this node stopped, they would only time out. */
    void failAll() {
        for (CompletableFuture<CommandReply> p : pending) {
            p.completeExceptionally(stopped.get());
        }
    }
}
