package io.hourglass.core.command;

import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventKey;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Group commit of publishes on the leader: concurrent publish requests become one log entry. A
 * request is proposed at once while fewer than {@code maxInFlight} publish entries are being
 * replicated; otherwise it waits for one to finish and goes out together with every request that
 * queued meanwhile — so a lone publisher waits for nothing, and under load each Raft entry (its
 * checksum, fsync share, apply and RocksDB write) carries many requests instead of one.
 *
 * <p>A merged entry holds at most {@code maxEntryBytes} serialised and
 * {@link EventKey#MAX_MESSAGES_PER_ENTRY} messages; a request alone above that goes out alone (the
 * publish validator bounds requests below it). Each request gets back its own slice of the entry's
 * published keys, in order, and the entry's stamp. Apply is unchanged: one put entry with the
 * requests' messages in queue order, so producer-id deduplication across merged requests works as
 * within one request. A failure fails every request in the entry with the same error.
 *
 * <p>One entry may go out past {@code maxInFlight} once every entry in flight has been out
 * {@link #STUCK_NANOS}: during a failover nothing comes back until a new leader is ready, and the
 * requests that queued behind the stuck entry would otherwise wait for it to come back before even
 * being proposed, then take a whole replication round of their own. Proposed, they wait for the
 * same new leader and commit alongside it. At most one extra, checked when a request arrives (the
 * client's own stuck rule sends one then), so the bound holds but for one.
 *
 * <p>Other commands pass straight through. Thread-safe.
 */
public final class PublishCoalescer implements Replicator {
    private record Waiting(PutCmd put, int bytes, CompletableFuture<CommandReply> reply) {
    }

    /** How long every in-flight entry must have been out before one more may go (see the class comment). */
    public static final long STUCK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Replicator delegate;
    private final int maxInFlight;
    private final int maxEntryBytes;
    private final LongSupplier nanoTime;
    private final ArrayDeque<Waiting> queue = new ArrayDeque<>();
    /** When each entry in flight was proposed (System.nanoTime); its size is the number in flight. */
    private final List<Long> sentAt = new ArrayList<>();
    /** Entries proposed and requests they carried, and entries sent past the limit (for metrics and tests). */
    private long entries;
    private long requests;
    private long pastLimit;

    public PublishCoalescer(Replicator delegate, int maxInFlight, int maxEntryBytes) {
        this(delegate, maxInFlight, maxEntryBytes, System::nanoTime);
    }

    PublishCoalescer(Replicator delegate, int maxInFlight, int maxEntryBytes, LongSupplier nanoTime) {
        if (maxInFlight < 1 || maxEntryBytes < 1) {
            throw new IllegalArgumentException("maxInFlight and maxEntryBytes must be positive");
        }
        this.delegate = delegate;
        this.maxInFlight = maxInFlight;
        this.maxEntryBytes = maxEntryBytes;
        this.nanoTime = nanoTime;
    }

    @Override
    public CompletableFuture<CommandReply> propose(Command command) {
        if (!command.hasPut()) {
            return delegate.propose(command);
        }
        CompletableFuture<CommandReply> reply = new CompletableFuture<>();
        synchronized (this) {
            queue.add(new Waiting(command.getPut(), command.getPut().getSerializedSize(), reply));
        }
        sendWhileSlotsFree();
        return reply;
    }

    private void sendWhileSlotsFree() {
        while (true) {
            List<Waiting> batch;
            long now = nanoTime.getAsLong();
            synchronized (this) {
                if (queue.isEmpty() || !slotFree(now)) {
                    return;
                }
                if (sentAt.size() >= maxInFlight) {
                    pastLimit++;
                }
                batch = takeBatch();
                sentAt.add(now);
                entries++;
                requests += batch.size();
            }
            send(batch, now);
        }
    }

    /** Under the monitor: below the limit, or at it with every entry out for {@link #STUCK_NANOS}. */
    private boolean slotFree(long now) {
        int inFlight = sentAt.size();
        return inFlight < maxInFlight
                || inFlight == maxInFlight && now - Collections.max(sentAt) >= STUCK_NANOS;
    }

    /** Under the monitor: the queue's head requests that fit one entry (at least one). */
    private List<Waiting> takeBatch() {
        List<Waiting> batch = new ArrayList<>();
        long bytes = 0;
        int messages = 0;
        for (Waiting w = queue.peek(); w != null; w = queue.peek()) {
            boolean fits = bytes + w.bytes <= maxEntryBytes
                    && messages + w.put.getMessagesCount() <= EventKey.MAX_MESSAGES_PER_ENTRY;
            if (!batch.isEmpty() && !fits) {
                break;
            }
            batch.add(queue.poll());
            bytes += w.bytes + 8; // field tag and length of each merged message, roughly
            messages += w.put.getMessagesCount();
        }
        return batch;
    }

    private void send(List<Waiting> batch, long sentNanos) {
        Command entry;
        if (batch.size() == 1) {
            entry = Command.newBuilder().setPut(batch.get(0).put).build();
        } else {
            PutCmd.Builder merged = PutCmd.newBuilder();
            for (Waiting w : batch) {
                merged.addAllMessages(w.put.getMessagesList());
            }
            entry = Command.newBuilder().setPut(merged).build();
        }
        CompletableFuture<CommandReply> proposed;
        try {
            proposed = delegate.propose(entry);
        } catch (RuntimeException e) {
            proposed = CompletableFuture.failedFuture(e);
        }
        proposed.whenComplete((reply, error) -> {
            synchronized (this) {
                sentAt.remove(Long.valueOf(sentNanos));
            }
            if (error != null) {
                batch.forEach(w -> w.reply.completeExceptionally(error));
            } else if (batch.size() == 1) {
                batch.get(0).reply.complete(reply);
            } else {
                split(batch, reply);
            }
            sendWhileSlotsFree();
        });
    }

    private static void split(List<Waiting> batch, CommandReply reply) {
        int at = 0;
        for (Waiting w : batch) {
            int n = w.put.getMessagesCount();
            CommandReply.Builder part = CommandReply.newBuilder().setStampedAtMs(reply.getStampedAtMs())
                    .addAllPublishedKeys(reply.getPublishedKeysList().subList(at, at + n));
            if (reply.getReplacedKeysCount() == reply.getPublishedKeysCount()) {
                part.addAllReplacedKeys(reply.getReplacedKeysList().subList(at, at + n));
            }
            w.reply.complete(part.build());
            at += n;
        }
    }

    /** Publish entries proposed so far. */
    public synchronized long entries() {
        return entries;
    }

    /** Publish requests those entries carried. */
    public synchronized long requests() {
        return requests;
    }

    /** Entries sent past the in-flight limit because every entry out was stuck (a failover). */
    public synchronized long entriesPastLimit() {
        return pastLimit;
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
