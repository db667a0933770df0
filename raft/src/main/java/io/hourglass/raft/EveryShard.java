package io.hourglass.raft;

import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.HourglassException;
import io.hourglass.core.NotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A membership change applied to every shard's group of a node ({@link RaftHost#addVoter},
 * {@link RaftHost#removeVoter}); a group that already has the change is skipped, so a call that
 * failed half-way can be repeated.
 */
final class EveryShard {
    private EveryShard() {
    }

    /** Adds the voter to every group at once (each waits for its catch-up); answers the first group's voters. */
    static List<RaftNode.Member> addVoter(List<RaftNode> replicas, String id, String host, int raftPort, String nodeId)
            throws IOException {
        // Every shard at once: each waits for the new node to catch up (a checkpoint install, often),
        // so one after the other would take the sum of those waits.
        List<CompletableFuture<List<RaftNode.Member>>> adds = new ArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean added = new java.util.concurrent.atomic.AtomicBoolean();
        for (RaftNode r : replicas) {
            CompletableFuture<List<RaftNode.Member>> add = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    List<RaftNode.Member> members = r.membership().addVoter(id, host, raftPort);
                    added.set(true); // before the future completes: the caller reads it once all have
                    add.complete(members);
                } catch (AlreadyExistsException e) {
                    try {
                        add.complete(r.membership().members());
                    } catch (IOException | RuntimeException again) {
                        add.completeExceptionally(again);
                    }
                } catch (IOException | RuntimeException e) {
                    add.completeExceptionally(e);
                }
            }, "hourglass-add-voter-" + nodeId + "-" + r.shardIndex());
            t.setDaemon(true);
            t.start();
            adds.add(add);
        }
        List<RaftNode.Member> result = null;
        Throwable failure = null;
        for (CompletableFuture<List<RaftNode.Member>> add : adds) {
            try {
                List<RaftNode.Member> members = add.join();
                result = result == null ? members : result;
            } catch (java.util.concurrent.CompletionException e) {
                failure = failure == null ? e.getCause() : failure;
            }
        }
        if (failure instanceof IOException io) {
            throw io;
        }
        if (failure instanceof RuntimeException re) {
            throw re;
        }
        if (!added.get()) {
            throw new AlreadyExistsException(HourglassException.excerpt(id) + " is already a member of the cluster");
        }
        return result;
    }

    /** Removes the voter from every group, the first listed (the one that names the members) last. */
    static List<RaftNode.Member> removeVoter(List<RaftNode> replicas, String id) throws IOException {
        List<RaftNode.Member> result = null;
        boolean removed = false;
        for (int i = replicas.size() - 1; i >= 0; i--) { // the group that names the members last
            try {
                replicas.get(i).handOver().offNode(id);
                result = replicas.get(i).membership().removeVoter(id);
                removed = true;
            } catch (NotFoundException e) {
                result = replicas.get(i).membership().members();
            }
        }
        if (!removed) {
            throw new NotFoundException(HourglassException.excerpt(id) + " is not a member of the cluster");
        }
        return result;
    }
}
