package io.hourglass.server.grpc;

import io.hourglass.api.v1.CancelRequest;
import io.hourglass.api.v1.CancelResponse;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.delivery.CancelOutcome;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.api.v1.PublishResponse;
import io.hourglass.api.v1.PublishedMessage;
import io.hourglass.api.v1.SubscribeRequest;
import io.hourglass.api.v1.SubscribeResponse;
import io.hourglass.core.command.PublishValidator;
import io.hourglass.core.command.QueueCommands;
import io.hourglass.server.shard.Shards;
import io.hourglass.core.delivery.DeliveryEngine;
import io.hourglass.core.proto.CommandReply;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.storage.EventKey;
import io.hourglass.server.NodeMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The scheduled-queue API. Publishing validates the whole batch, then proposes it as one log
 * entry and answers with the ids once committed. Subscribing is a {@link SubscribeSession}.
 */
public final class BrokerService extends BrokerGrpc.BrokerImplBase {
    private final Shards shards;
    private final PublishValidator validator;
    private final Executor writer;
    private final NodeMetrics metrics;
    private final StreamLimits limits;

    /** @param limits the init deadline of Subscribe streams and the node's consumer cap */
    public BrokerService(Shards shards, PublishValidator validator, Executor writer,
                         NodeMetrics metrics, StreamLimits limits) {
        this.limits = limits;
        this.shards = shards;
        this.validator = validator;
        this.writer = writer;
        this.metrics = metrics;
    }

    /** A batch refused at once throws (its status is mapped by {@link ErrorStatusInterceptor}). */
    @Override
    public void publish(PublishRequest request, StreamObserver<PublishResponse> out) {
        publishBatch(request).whenComplete((response, error) -> {
            if (error != null) {
                out.onError(StatusMapper.toStatus(error));
            } else {
                out.onNext(response);
                out.onCompleted();
            }
        });
    }

    @Override
    public StreamObserver<PublishRequest> publishStream(StreamObserver<PublishResponse> out) {
        return new StreamObserver<>() {
            private final List<CompletableFuture<PublishResponse>> batches = new ArrayList<>();
            private boolean failed;

            @Override
            public void onNext(PublishRequest request) {
                if (failed) {
                    return;
                }
                try {
                    batches.add(publishBatch(request));
                } catch (RuntimeException e) {
                    failed = true;
                    Status s = Status.fromThrowable(StatusMapper.toStatus(e));
                    out.onError(s.withDescription("batch " + batches.size() + " refused (earlier batches were published): "
                            + s.getDescription()).asRuntimeException());
                }
            }

            @Override
            public void onError(Throwable t) {
                failed = true;
            }

            @Override
            public void onCompleted() {
                if (failed) {
                    return;
                }
                CompletableFuture.allOf(batches.toArray(CompletableFuture[]::new)).whenComplete((v, error) -> {
                    if (error != null) {
                        out.onError(StatusMapper.toStatus(error));
                        return;
                    }
                    PublishResponse.Builder all = PublishResponse.newBuilder();
                    batches.forEach(b -> all.addAllMessages(b.join().getMessagesList()));
                    out.onNext(all.build());
                    out.onCompleted();
                });
            }
        };
    }

    private CompletableFuture<PublishResponse> publishBatch(PublishRequest request) {
        List<NewMessage> messages = new ArrayList<>(request.getMessagesCount());
        for (PublishMessage m : request.getMessagesList()) {
            messages.add(QueueCommands.message(m.getTopic(), m.getPayload(), m.getHeadersMap(), m.getDelayMs(),
                    m.getTtlMs(), m.getProducerId(), m.getKey()).toBuilder().setEveryMs(m.getEveryMs()).build());
        }
        validator.validateBatch(messages);
        long started = System.nanoTime();
        if (shards.count() == 1) {
            return shards.first().publisher().propose(QueueCommands.publish(messages))
                    .thenApply(reply -> {
                        metrics.recordPublish(messages, System.nanoTime() - started);
                        return toResponse(reply);
                    });
        }
        return publishAcrossShards(messages, started);
    }

    /**
     * A batch whose topics lie on several shards: one entry per shard (no command spans two), the
     * answers put back in the batch's order. Each shard's part is atomic on its own; a failed part
     * fails the call (the client retries the batch; producer ids make that safe).
     */
    private CompletableFuture<PublishResponse> publishAcrossShards(List<NewMessage> messages, long started) {
        java.util.Map<Shards.Shard, List<Integer>> positions = new java.util.LinkedHashMap<>();
        for (int i = 0; i < messages.size(); i++) {
            positions.computeIfAbsent(shards.of(messages.get(i).getTopic()), s -> new ArrayList<>()).add(i);
        }
        List<CompletableFuture<PublishResponse>> parts = new ArrayList<>();
        List<List<Integer>> order = new ArrayList<>();
        positions.forEach((shard, at) -> {
            List<NewMessage> part = at.stream().map(messages::get).toList();
            order.add(at);
            parts.add(shard.publisher().propose(QueueCommands.publish(part)).thenApply(BrokerService::toResponse));
        });
        return CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new)).thenApply(v -> {
            PublishedMessage[] inOrder = new PublishedMessage[messages.size()];
            for (int p = 0; p < parts.size(); p++) {
                List<PublishedMessage> answered = parts.get(p).join().getMessagesList();
                for (int k = 0; k < answered.size(); k++) {
                    inOrder[order.get(p).get(k)] = answered.get(k);
                }
            }
            metrics.recordPublish(messages, System.nanoTime() - started);
            return PublishResponse.newBuilder().addAllMessages(java.util.Arrays.asList(inOrder)).build();
        });
    }

    private static PublishResponse toResponse(CommandReply reply) {
        PublishResponse.Builder b = PublishResponse.newBuilder();
        boolean replacements = reply.getReplacedKeysCount() == reply.getPublishedKeysCount();
        for (int i = 0; i < reply.getPublishedKeysCount(); i++) {
            EventKey key = EventKey.fromBytes(reply.getPublishedKeys(i).toByteArray());
            PublishedMessage.Builder m = PublishedMessage.newBuilder().setId(key.toHex()).setDueAtMs(key.dueAtMs())
                    .setEnqueuedAtMs(reply.getStampedAtMs());
            if (replacements && !reply.getReplacedKeys(i).isEmpty()) {
                m.setReplacedId(EventKey.fromBytes(reply.getReplacedKeys(i).toByteArray()).toHex());
            }
            b.addMessages(m);
        }
        return b.build();
    }

    /** The shard map as this node knows it: each shard's leader, by its Raft view. */
    @Override
    public void shards(io.hourglass.api.v1.ShardsRequest request, StreamObserver<io.hourglass.api.v1.ShardsResponse> out) {
        io.hourglass.api.v1.ShardsResponse.Builder b = io.hourglass.api.v1.ShardsResponse.newBuilder().setCount(shards.count());
        for (Shards.Shard shard : shards.all()) {
            String leaderId = shard.raft().status().leaderId();
            String address = shard.raft().leaderHint();
            b.addLeaders(io.hourglass.api.v1.ShardLeader.newBuilder().setShard(shard.index())
                    .setLeaderId(leaderId == null ? "" : leaderId).setAddress(address == null ? "" : address));
        }
        out.onNext(b.build());
        out.onCompleted();
    }

    /** A cancel runs on the leader's delivery loop ({@link DeliveryEngine#cancel}); a follower refers it to the leader. */
    @Override
    public void cancel(CancelRequest request, StreamObserver<CancelResponse> out) {
        validator.validateTopic(request.getTopic());
        CompletableFuture<CancelOutcome> cancel;
        if (!request.getKey().isEmpty()) {
            if (!request.getId().isEmpty()) {
                throw new InvalidRequestException("a cancel names a message id or a key, not both");
            }
            validator.validateKey("", request.getKey());
            cancel = shards.of(request.getTopic()).engine().cancelKeyed(request.getTopic(), request.getKey());
        } else {
            cancel = shards.of(request.getTopic()).engine().cancel(request.getTopic(), PublishValidator.messageId(request.getId(), "message id"));
        }
        cancel.whenComplete((outcome, error) -> {
            if (error != null) {
                out.onError(StatusMapper.toStatus(error));
                return;
            }
            out.onNext(CancelResponse.newBuilder().setOutcome(outcome == CancelOutcome.CANCELLED
                    ? CancelResponse.Outcome.CANCELLED : CancelResponse.Outcome.ALREADY_DELIVERED).build());
            out.onCompleted();
        });
    }

    @Override
    public StreamObserver<SubscribeRequest> subscribe(StreamObserver<SubscribeResponse> out) {
        return new SubscribeSession(topic -> shards.of(topic).engine(), validator, (ServerCallStreamObserver<SubscribeResponse>) out, writer, metrics,
                limits);
    }
}
