package io.hourglass.core.delivery;

import io.hourglass.core.command.QueueCommands;
import io.hourglass.core.command.Replicator;
import io.hourglass.core.storage.EventKey;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Collects acknowledgements and expirations and replicates them as {@code DeleteBatchCmd}s of at
 * most {@code maxKeys} deletions. A batch that fails is put back and retried on the next flush.
 * Each submitted deletion's future completes when the batch holding it has committed — that is
 * the confirmed ACK.
 *
 * <p>Owned by the delivery loop: every method runs on it, and proposal answers (which arrive on
 * Raft threads) come back to it through {@code loop}, so nothing here locks. A confirmed ACK asks for
 * a flush at once ({@link #flushSoon}); while such a flush is being replicated, later ones wait for
 * it and then go out together — group commit, so that confirms cost one batch per round trip and
 * never wait for the periodic interval.
 */
final class Deleter {
    private static final Logger LOG = LoggerFactory.getLogger(Deleter.class);

    record Pending(EventKey key, String group) {
    }

    private final Replicator replicator;
    private final int maxKeys;
    private final DeliveryMetrics metrics;
    private final Map<Pending, List<CompletableFuture<Void>>> pending = new LinkedHashMap<>();
    private final java.util.function.BooleanSupplier leading;
    private final java.util.concurrent.Executor loop;
    /** The delivery counts to replicate with the next batch, and where those of a failed batch go back. */
    private final java.util.function.Supplier<List<QueueCommands.Count>> counts;
    private final java.util.function.Consumer<List<QueueCommands.Count>> recount;
    /** Flushes asked for by {@link #flushSoon} still being replicated, and whether another one waits. */
    private int soonInFlight;
    private boolean soonWanted;

    Deleter(Replicator replicator, int maxKeys, DeliveryMetrics metrics, java.util.function.BooleanSupplier leading,
            java.util.concurrent.Executor loop) {
        this(replicator, maxKeys, metrics, leading, loop, List::of, c -> { });
    }

    /**
     * @param counts the delivery counts of unacknowledged group deliveries to replicate with the next
     *        flush (DESIGN §9: batched with the deletes)
     * @param recount takes back the counts of a batch that failed
     */
    Deleter(Replicator replicator, int maxKeys, DeliveryMetrics metrics, java.util.function.BooleanSupplier leading,
            java.util.concurrent.Executor loop, java.util.function.Supplier<List<QueueCommands.Count>> counts,
            java.util.function.Consumer<List<QueueCommands.Count>> recount) {
        this.counts = counts;
        this.recount = recount;
        this.leading = leading;
        this.loop = loop;
        this.replicator = replicator;
        this.maxKeys = maxKeys;
        this.metrics = metrics;
    }

    /** Queues a deletion; returns a future completed once it is replicated. */
    CompletableFuture<Void> submit(EventKey key, String group) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        pending.computeIfAbsent(new Pending(key, group), p -> new ArrayList<>()).add(f);
        return f;
    }

    /** Queues a deletion unless the same one is already waiting; true when it was new. */
    boolean submitOnce(EventKey key, String group) {
        Pending p = new Pending(key, group);
        if (pending.containsKey(p)) {
            return false;
        }
        pending.put(p, new ArrayList<>());
        return true;
    }

    int queued() {
        return pending.size();
    }

    /**
     * Proposes everything queued now, in batches of at most {@code maxKeys}; returns one future per
     * batch. Deletions that fail are re-queued for the next flush, never retried within this one.
     */
    List<CompletableFuture<Void>> flush() {
        List<Map<Pending, List<CompletableFuture<Void>>>> batches = takeAll();
        List<QueueCommands.Count> counted = counts.get();
        if (batches.isEmpty() && !counted.isEmpty()) {
            batches.add(new LinkedHashMap<>());
        }
        List<CompletableFuture<Void>> proposals = new ArrayList<>(batches.size());
        for (int i = 0; i < batches.size(); i++) {
            proposals.add(propose(batches.get(i), i == batches.size() - 1 ? counted : List.of()));
        }
        return proposals;
    }

    /** Proposes what is queued now unless an earlier such flush is still out; then right after it. */
    void flushSoon() {
        if (soonInFlight > 0) {
            soonWanted = true;
            return;
        }
        List<CompletableFuture<Void>> batches = flush();
        if (batches.isEmpty()) {
            return;
        }
        soonInFlight++;
        CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new)).whenComplete((v, e) -> loop.execute(() -> {
            soonInFlight--;
            if (soonWanted) {
                soonWanted = false;
                flushSoon();
            }
        }));
    }

    private List<Map<Pending, List<CompletableFuture<Void>>>> takeAll() {
        List<Map<Pending, List<CompletableFuture<Void>>>> batches = new ArrayList<>();
        Map<Pending, List<CompletableFuture<Void>>> batch = new LinkedHashMap<>();
        for (Map.Entry<Pending, List<CompletableFuture<Void>>> e : pending.entrySet()) {
            if (batch.size() == maxKeys) {
                batches.add(batch);
                batch = new LinkedHashMap<>();
            }
            batch.put(e.getKey(), e.getValue());
        }
        if (!batch.isEmpty()) {
            batches.add(batch);
        }
        pending.clear();
        return batches;
    }

    private CompletableFuture<Void> propose(Map<Pending, List<CompletableFuture<Void>>> batch,
                                            List<QueueCommands.Count> counted) {
        List<Map.Entry<EventKey, String>> deletions = new ArrayList<>(batch.size());
        for (Pending p : batch.keySet()) {
            deletions.add(Map.entry(p.key(), p.group()));
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        CompletableFuture<?> proposed;
        try {
            proposed = replicator.propose(counted.isEmpty() ? QueueCommands.deleteBatch(deletions)
                    : QueueCommands.deleteBatch(deletions, counted));
        } catch (RuntimeException e) {
            proposed = CompletableFuture.failedFuture(e);
        }
        proposed.whenComplete((reply, error) -> {
            if (error == null) {
                if (!batch.isEmpty()) {
                    metrics.deleteBatches.increment();
                    metrics.deleteBatchKeys.add(batch.size());
                    metrics.deleteBatchObserver.accept(batch.size());
                }
                batch.values().forEach(fs -> fs.forEach(f -> f.complete(null)));
                done.complete(null);
            } else {
                metrics.deleteFailures.increment();
                done.completeExceptionally(error);
                if (!leading.getAsBoolean()) {
                    // Leadership moved while the batch was out: the new leader owns deletion now.
                    batch.values().forEach(fs -> fs.forEach(f -> f.completeExceptionally(error)));
                    return;
                }
                LOG.warn("delete batch of {} keys failed, re-queued: {}", batch.size(), error.toString());
                loop.execute(() -> {
                    requeue(batch);
                    recount.accept(counted);
                });
            }
        });
        return done;
    }

    private void requeue(Map<Pending, List<CompletableFuture<Void>>> batch) {
        batch.forEach((p, fs) -> pending.computeIfAbsent(p, k -> new ArrayList<>()).addAll(fs));
    }

    /** Leadership lost: nothing queued here will be proposed by this node; callers learn why. */
    void failAll(RuntimeException cause) {
        pending.values().forEach(fs -> fs.forEach(f -> f.completeExceptionally(cause)));
        pending.clear();
    }
}
