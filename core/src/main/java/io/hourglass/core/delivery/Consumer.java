package io.hourglass.core.delivery;

import io.hourglass.core.storage.EventKey;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A registered consumer: its subscription, its bounded delivery buffer and the tags sent to it.
 * The delivery loop is the only producer of the buffer, so a capacity check followed by an offer
 * cannot fail; the transport drains it with {@link #poll()} as flow control allows. When the loop
 * found the buffer full, the poll that frees half of it asks the loop for a pass at once, instead of
 * leaving the consumer idle until the next poll interval.
 */
public final class Consumer {
    /** Called when deliveries are buffered or the consumer is closed; the transport drains then. */
    public interface Sink {
        void deliveriesAvailable();

        /** The broker dropped this consumer (leadership lost, shutdown); the stream must end. */
        void closed(String reason);
    }

    private final String id;
    private final String topic;
    private final String group;
    private final BlockingQueue<Delivery> buffer;
    private final Sink sink;
    private final Recipient recipient;
    private final int capacity;
    /** Asks the delivery loop for a pass; called by the poll that frees a starved buffer. */
    private final Runnable wantsMore;
    private final java.util.function.LongSupplier now;
    private final Runnable expiredInBuffer;
    /** Set by the loop when it found the buffer full; cleared by the poll that frees half of it. */
    private volatile boolean starved;
    private final int maxUnacked;
    /** Set by the loop when {@link #maxUnacked} deliveries were unsettled; cleared by the settlement that frees one. */
    private volatile boolean atUnackedLimit;
    /** Tags sent on this consumer's stream and not yet acked or nacked: the only tags it may ack. */
    private final Set<EventKey> sentTags = ConcurrentHashMap.newKeySet();
    /**
     * Delivery loop only: the tracker released this consumer, and refuses to record new deliveries
     * for it (nothing may be left held by a stream that is gone).
     */
    boolean releasedInFlight;

    Consumer(String id, String topic, String group, int queueSize, Sink sink) {
        this(id, topic, group, queueSize, sink, () -> { }, () -> Long.MIN_VALUE, () -> { }, 0);
    }

    /**
     * @param now the leader's clock, read when a delivery leaves the buffer
     * @param expiredInBuffer called for each delivery {@link #poll()} drops because its TTL passed
     *        while it waited in the buffer
     * @param maxUnacked deliveries unsettled at once (sent, not yet ACKed or NACKed, nor gone with
     *        their message); 0: no limit but the buffer
     */
    Consumer(String id, String topic, String group, int queueSize, Sink sink, Runnable wantsMore,
             java.util.function.LongSupplier now, Runnable expiredInBuffer, int maxUnacked) {
        this.maxUnacked = maxUnacked;
        this.now = now;
        this.expiredInBuffer = expiredInBuffer;
        this.id = id;
        this.topic = topic;
        this.group = group;
        this.buffer = new ArrayBlockingQueue<>(queueSize);
        this.capacity = queueSize;
        this.sink = sink;
        this.wantsMore = wantsMore;
        this.recipient = group.isEmpty() ? new Recipient.Universal(id) : new Recipient.Group(group);
    }

    public String id() {
        return id;
    }

    public String topic() {
        return topic;
    }

    /** The consumer group, or empty for a universal consumer. */
    public String group() {
        return group;
    }

    public boolean isUniversal() {
        return group.isEmpty();
    }

    /** The in-flight recipient this consumer receives for: its group, or itself when universal. */
    Recipient recipient() {
        return recipient;
    }

    public Delivery poll() {
        Delivery d = buffer.poll();
        while (d != null && expiredWhileBuffered(d)) {
            d = buffer.poll();
        }
        if (starved && buffer.size() <= capacity / 2) {
            starved = false;
            wantsMore.run();
        }
        return d;
    }

    /**
     * A delivery whose TTL passed while it waited for the transport (a slow stream, flow control) is
     * not sent: the dispatcher checked the TTL when it buffered it, and the check is made again as it
     * leaves. It stays in flight for its recipient; when the in-flight timeout hands it back, the
     * dispatcher finds it expired and deletes it, as it does for any expired message.
     */
    private boolean expiredWhileBuffered(Delivery d) {
        long expiresAt = d.message().getExpiresAtMs();
        if (expiresAt > 0 && expiresAt <= now.getAsLong()) {
            expiredInBuffer.run();
            return true;
        }
        return false;
    }

    public int buffered() {
        return buffer.size();
    }

    /** Delivery loop only; a full buffer marks the consumer starved (see {@link #poll()}). */
    boolean hasRoom() {
        if (maxUnacked > 0 && sentTags.size() >= maxUnacked) {
            atUnackedLimit = true;
            if (sentTags.size() >= maxUnacked) {
                return false;
            }
            atUnackedLimit = false;
        }
        if (buffer.remainingCapacity() > 0) {
            return true;
        }
        starved = true;
        return buffer.remainingCapacity() > 0;
    }

    /** Delivery loop only. */
    void push(Delivery d) {
        sentTags.add(d.tag());
        if (!buffer.offer(d)) {
            sentTags.remove(d.tag());
            throw new IllegalStateException("consumer " + id + " buffer full after a capacity check");
        }
        sink.deliveriesAvailable();
    }

    /**
     * Delivery loop only, once the stream ended: empties the buffer and returns the tags of the
     * deliveries still in it, which no stream ever carried. One the transport polled meanwhile
     * counts as sent.
     */
    Set<EventKey> takeUnsent() {
        java.util.List<Delivery> left = new java.util.ArrayList<>();
        buffer.drainTo(left);
        Set<EventKey> tags = new java.util.HashSet<>(left.size() * 2);
        for (Delivery d : left) {
            sentTags.remove(d.tag());
            tags.add(d.tag());
        }
        return tags;
    }

    boolean takeTag(EventKey tag) {
        boolean taken = sentTags.remove(tag);
        if (taken) {
            settled();
        }
        return taken;
    }

    void forgetTag(EventKey tag) {
        if (sentTags.remove(tag)) {
            settled();
        }
    }

    /** A delivery stopped counting against {@link #maxUnacked}: a consumer held at it asks for a pass. */
    private void settled() {
        if (atUnackedLimit && sentTags.size() < maxUnacked) {
            atUnackedLimit = false;
            wantsMore.run();
        }
    }

    void close(String reason) {
        sink.closed(reason);
    }

    @Override
    public String toString() {
        return "consumer " + id + " (" + topic + (isUniversal() ? ", universal" : ", group " + group) + ")";
    }
}
