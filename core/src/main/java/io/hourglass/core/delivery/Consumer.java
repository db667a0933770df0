package io.hourglass.core.delivery;

import io.hourglass.core.storage.EventKey;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A registered consumer: its subscription, its bounded delivery buffer and the tags sent to it.
 * The dispatcher thread is the only producer of the buffer, so a capacity check followed by an
 * offer cannot fail; the transport drains it with {@link #poll()} as flow control allows.
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
    /** Tags sent on this consumer's stream and not yet acked or nacked: the only tags it may ack. */
    private final Set<EventKey> sentTags = ConcurrentHashMap.newKeySet();
    /**
     * Guarded by the {@link InFlightTracker}'s monitor: the tracker released this consumer, and
     * refuses to record new deliveries for it (a dispatcher pass that read its route before the
     * disconnect must not leave a message held by a stream that is gone).
     */
    boolean releasedInFlight;

    Consumer(String id, String topic, String group, int queueSize, Sink sink) {
        this.id = id;
        this.topic = topic;
        this.group = group;
        this.buffer = new ArrayBlockingQueue<>(queueSize);
        this.sink = sink;
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
    String recipient() {
        return isUniversal() ? "u:" + id : "g:" + group;
    }

    public Delivery poll() {
        return buffer.poll();
    }

    public int buffered() {
        return buffer.size();
    }

    boolean hasRoom() {
        return buffer.remainingCapacity() > 0;
    }

    /** Dispatcher thread only. */
    void push(Delivery d) {
        sentTags.add(d.tag());
        if (!buffer.offer(d)) {
            sentTags.remove(d.tag());
            throw new IllegalStateException("consumer " + id + " buffer full after a capacity check");
        }
        sink.deliveriesAvailable();
    }

    boolean takeTag(EventKey tag) {
        return sentTags.remove(tag);
    }

    void forgetTag(EventKey tag) {
        sentTags.remove(tag);
    }

    void close(String reason) {
        sink.closed(reason);
    }

    @Override
    public String toString() {
        return "consumer " + id + " (" + topic + (isUniversal() ? ", universal" : ", group " + group) + ")";
    }
}
