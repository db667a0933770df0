package io.hourglass.client;

import com.google.protobuf.ByteString;
import io.hourglass.api.v1.Delivery;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishedMessage;
import java.util.HexFormat;

/** Converts between the client's value types and the wire messages of {@code broker.proto}. */
final class ProtoCodec {
    private ProtoCodec() {
    }

    static PublishMessage toProto(Message message) {
        return PublishMessage.newBuilder()
                .setTopic(message.topic())
                .setPayload(ByteString.copyFrom(message.payload()))
                .putAllHeaders(message.headers())
                .setDelayMs(message.delay().toMillis())
                .setTtlMs(message.ttl().toMillis())
                .setKey(message.key())
                .setEveryMs(message.every().toMillis())
                // Every message gets an id the broker deduplicates on, so a retried publish whose
                // first attempt did commit (a failover, a lost answer) stores the message once.
                .setProducerId(message.producerId().isEmpty() ? ProducerIds.next()
                        : message.producerId())
                .build();
    }

    static PublishResult fromProto(PublishedMessage published) {
        return new PublishResult(published.getId(), published.getDueAtMs(),
                published.getEnqueuedAtMs(), published.getReplacedId());
    }

    static ReceivedMessage fromProto(Delivery delivery) {
        byte[] tag = delivery.getTag().toByteArray();
        String id = delivery.getId().isEmpty() ? HexFormat.of().formatHex(tag) : delivery.getId();
        return new ReceivedMessage(tag, id, delivery.getTopic(), delivery.getPayload().toByteArray(),
                delivery.getHeadersMap(), delivery.getEnqueuedAtMs(), delivery.getDueAtMs(),
                delivery.getDeliveredAtMs(), delivery.getAttempt());
    }
}
