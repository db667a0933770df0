package io.hourglass.server;

import io.hourglass.core.delivery.DeliveryEngine;
import io.hourglass.core.delivery.DeliveryMetrics;
import io.hourglass.core.proto.NewMessage;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

/**
 * The node's counters, rendered in the Prometheus text format for {@code /metrics}. Counters
 * are lock-free adders; rendering reads them without stopping anyone.
 */
public final class NodeMetrics {
    private final Map<String, LongAdder> publishedByTopic = new ConcurrentHashMap<>();
    private final LongAdder publishRequests = new LongAdder();
    private final LongAdder publishNanos = new LongAdder();
    private volatile DeliveryEngine engine;
    private volatile BooleanSupplier leader = () -> false;

    void bind(DeliveryEngine engine, BooleanSupplier leader) {
        this.engine = engine;
        this.leader = leader;
    }

    public void recordPublish(List<NewMessage> messages, long nanos) {
        publishRequests.increment();
        publishNanos.add(nanos);
        for (NewMessage m : messages) {
            publishedByTopic.computeIfAbsent(m.getTopic(), t -> new LongAdder()).increment();
        }
    }

    public long publishedTotal() {
        return publishedByTopic.values().stream().mapToLong(LongAdder::sum).sum();
    }

    public String render() {
        StringBuilder b = new StringBuilder(2048);
        type(b, "hourglass_messages_published_total", "counter", "Messages committed through Publish on this node");
        publishedByTopic.forEach((topic, n) ->
                b.append("hourglass_messages_published_total{topic=\"").append(escape(topic)).append("\"} ").append(n.sum()).append('\n'));
        counter(b, "hourglass_publish_requests_total", "Publish batches committed", publishRequests.sum());
        counter(b, "hourglass_publish_latency_seconds_sum", "Total time from Publish to commit", publishNanos.sum() / 1e9);
        gauge(b, "hourglass_is_leader", "1 when this node leads and dispatches", leader.getAsBoolean() ? 1 : 0);
        DeliveryEngine e = engine;
        if (e != null) {
            DeliveryMetrics m = e.metrics();
            counter(b, "hourglass_messages_dispatched_total", "Deliveries handed to consumers", m.dispatched.sum());
            counter(b, "hourglass_messages_redelivered_total", "Deliveries with attempt > 1", m.redelivered.sum());
            counter(b, "hourglass_messages_expired_total", "Messages removed because their TTL passed", m.expired.sum());
            counter(b, "hourglass_consumer_ack_total", "ACKs accepted", m.acks.sum());
            counter(b, "hourglass_consumer_nack_total", "NACKs accepted", m.nacks.sum());
            counter(b, "hourglass_delete_batches_total", "Delete batches committed", m.deleteBatches.sum());
            counter(b, "hourglass_delete_batch_keys_total", "Deletions in committed delete batches", m.deleteBatchKeys.sum());
            counter(b, "hourglass_delete_failures_total", "Delete batches that failed and were re-queued", m.deleteFailures.sum());
            counter(b, "hourglass_dispatch_passes_total", "Dispatcher passes", m.dispatchPasses.sum());
            counter(b, "hourglass_delivery_lateness_seconds_sum", "Sum of (delivered - due) over deliveries", m.latenessMsSum.sum() / 1e3);
            gauge(b, "hourglass_messages_in_flight", "Deliveries awaiting ACK", e.inFlightCount());
            gauge(b, "hourglass_active_consumers", "Consumers registered on this node", e.hub().size());
            gauge(b, "hourglass_pending_deletions", "ACKs and expirations waiting for the next delete batch", e.queuedDeletions());
        }
        return b.toString();
    }

    private static void type(StringBuilder b, String name, String type, String help) {
        b.append("# HELP ").append(name).append(' ').append(help).append('\n');
        b.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private static void counter(StringBuilder b, String name, String help, double value) {
        type(b, name, "counter", help);
        b.append(name).append(' ').append(value).append('\n');
    }

    private static void gauge(StringBuilder b, String name, String help, double value) {
        type(b, name, "gauge", help);
        b.append(name).append(' ').append(value).append('\n');
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
