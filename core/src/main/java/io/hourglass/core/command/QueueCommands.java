package io.hourglass.core.command;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import java.util.List;
import java.util.Map;

/**
 * Builds the queue's publish command, beside the {@link QueueApplier} that applies it, so the
 * transports never assemble log entries themselves. Check a batch with
 * {@link PublishValidator#validateBatch} before proposing it.
 */
public final class QueueCommands {
    private QueueCommands() {
    }

    /**
     * One message of a publish.
     *
     * @param delayMs from the leader's stamp to the due time
     * @param ttlMs counted from the due time; 0 = never expires
     * @param producerId the producer's id for deduplication; empty for none
     */
    public static NewMessage message(String topic, ByteString payload, Map<String, String> headers, long delayMs,
                                     long ttlMs, String producerId) {
        return NewMessage.newBuilder().setTopic(topic).setPayload(payload).putAllHeaders(headers)
                .setDelayMs(delayMs).setTtlMs(ttlMs).setProducerId(producerId).build();
    }

    /** {@link #message} with a schedule key: it replaces the topic's stored message with that key (empty: none). */
    public static NewMessage message(String topic, ByteString payload, Map<String, String> headers, long delayMs,
                                     long ttlMs, String producerId, String key) {
        return message(topic, payload, headers, delayMs, ttlMs, producerId).toBuilder().setKey(key).build();
    }

    /** A publish of one batch: one log entry, answered with one key per message in order. */
    public static Command publish(List<NewMessage> messages) {
        return Command.newBuilder().setPut(PutCmd.newBuilder().addAllMessages(messages)).build();
    }

    /** Makes a consumer group durable on its topic: the deletion rule counts it from this entry on. */
    public static Command registerGroup(String topic, String group) {
        return Command.newBuilder().setRegisterGroup(io.hourglass.core.proto.RegisterGroupCmd.newBuilder()
                .setTopic(topic).setGroup(group)).build();
    }

    /**
     * Deletes one message of {@code topic} with its expiry entry and receipts, whatever its groups
     * acknowledged (an admin's delete, a producer's cancel); answers a deleted count of 0 when the
     * topic holds no such message.
     */
    public static Command deleteMessage(String topic, io.hourglass.core.storage.EventKey key) {
        return Command.newBuilder().setDeleteMessage(io.hourglass.core.proto.DeleteMessageCmd.newBuilder()
                .setTopic(topic).setEventKey(ByteString.copyFrom(key.toBytes()))).build();
    }

    /**
     * {@link #deleteMessage} by a cancel by schedule key {@code scheduleKey}, which named {@code key}:
     * a recurrence re-armed meanwhile ends too.
     */
    public static Command deleteKeyed(String topic, io.hourglass.core.storage.EventKey key, String scheduleKey) {
        Command c = deleteMessage(topic, key);
        return c.toBuilder().setDeleteMessage(c.getDeleteMessage().toBuilder().setByKey(true)
                .setScheduleKey(scheduleKey)).build();
    }

    /** A durable group's delayed NACK: it is not offered the message again before {@code untilMs}. */
    public static Command defer(io.hourglass.core.storage.EventKey key, String group, long untilMs) {
        return Command.newBuilder().setDefer(io.hourglass.core.proto.DeferCmd.newBuilder()
                .addDeferrals(io.hourglass.core.proto.Deferral.newBuilder().setEventKey(ByteString.copyFrom(key.toBytes()))
                        .setGroup(group).setUntilMs(untilMs))).build();
    }

    /**
     * One batch of acknowledgements and expirations: each deletion is a group's receipt, or with
     * {@link QueueApplier#ALL_GROUPS} the message's removal.
     */
    public static Command deleteBatch(Iterable<Map.Entry<io.hourglass.core.storage.EventKey, String>> deletions) {
        io.hourglass.core.proto.DeleteBatchCmd.Builder cmd = io.hourglass.core.proto.DeleteBatchCmd.newBuilder();
        for (Map.Entry<io.hourglass.core.storage.EventKey, String> d : deletions) {
            cmd.addDeletions(io.hourglass.core.proto.Deletion.newBuilder()
                    .setEventKey(ByteString.copyFrom(d.getKey().toBytes())).setGroup(d.getValue()));
        }
        return Command.newBuilder().setDeleteBatch(cmd).build();
    }

    /** A delivery count of a durable group, for {@link #deleteBatch(Iterable, Iterable)}. */
    public record Count(io.hourglass.core.storage.EventKey key, String group, int deliveries) {
    }

    /** {@link #deleteBatch(Iterable)} that also replicates delivery counts of unacknowledged messages. */
    public static Command deleteBatch(Iterable<Map.Entry<io.hourglass.core.storage.EventKey, String>> deletions,
                                      Iterable<Count> counts) {
        io.hourglass.core.proto.DeleteBatchCmd.Builder cmd = deleteBatch(deletions).getDeleteBatch().toBuilder();
        for (Count c : counts) {
            cmd.addCounts(io.hourglass.core.proto.DeliveryCount.newBuilder()
                    .setEventKey(ByteString.copyFrom(c.key().toBytes())).setGroup(c.group()).setDeliveries(c.deliveries()));
        }
        return Command.newBuilder().setDeleteBatch(cmd).build();
    }

    /** Moves a message of a durable group to its dead-letter topic after {@code deliveries} deliveries. */
    public static Command deadLetter(io.hourglass.core.storage.EventKey key, String group, String deadLetterTopic,
                                     int deliveries, String reason) {
        return Command.newBuilder().setDeadLetter(io.hourglass.core.proto.DeadLetterCmd.newBuilder()
                .setEventKey(ByteString.copyFrom(key.toBytes())).setGroup(group).setDeadLetterTopic(deadLetterTopic)
                .setDeliveries(deliveries).setReason(reason)).build();
    }

    /** {@link #deadLetter} whose copy went to the dead-letter topic's own shard already. */
    public static Command deadLetterCopiedElsewhere(io.hourglass.core.storage.EventKey key, String group,
                                                    String deadLetterTopic, int deliveries, String reason) {
        Command c = deadLetter(key, group, deadLetterTopic, deliveries, reason);
        return c.toBuilder().setDeadLetter(c.getDeadLetter().toBuilder().setCopiedElsewhere(true)).build();
    }

    /**
     * Sets a durable group's policy; null leaves a field as stored.
     *
     * @param backoffMs the back-off steps (empty: none), or null to keep them
     */
    public static Command configureGroup(String topic, String group, List<Long> backoffMs, Integer maxDeliveries,
                                         String deadLetterTopic) {
        io.hourglass.core.proto.ConfigureGroupCmd.Builder b = io.hourglass.core.proto.ConfigureGroupCmd.newBuilder()
                .setTopic(topic).setGroup(group);
        if (backoffMs != null) {
            b.setSetBackoff(true).addAllBackoffMs(backoffMs);
        }
        if (maxDeliveries != null) {
            b.setMaxDeliveries(maxDeliveries);
        }
        if (deadLetterTopic != null) {
            b.setDeadLetterTopic(deadLetterTopic);
        }
        return Command.newBuilder().setConfigureGroup(b).build();
    }

    /** Recurring messages that fell due, to be re-armed (see {@code FireCmd}). */
    public static Command fire(List<io.hourglass.core.storage.EventKey> keys) {
        io.hourglass.core.proto.FireCmd.Builder b = io.hourglass.core.proto.FireCmd.newBuilder();
        keys.forEach(k -> b.addEventKeys(ByteString.copyFrom(k.toBytes())));
        return Command.newBuilder().setFire(b).build();
    }
}
