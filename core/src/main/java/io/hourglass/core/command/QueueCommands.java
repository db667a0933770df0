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

    /** A publish of one batch: one log entry, answered with one key per message in order. */
    public static Command publish(List<NewMessage> messages) {
        return Command.newBuilder().setPut(PutCmd.newBuilder().addAllMessages(messages)).build();
    }
}
