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
import io.hourglass.core.command.Replicator;
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
    private final Replicator replicator;
    private final DeliveryEngine engine;
    private final PublishValidator validator;
    private final Executor writer;
    private final NodeMetrics metrics;
    private final StreamLimits limits;

    /** @param limits the init deadline of Subscribe streams and the node's consumer cap */
    public BrokerService(Replicator replicator, DeliveryEngine engine, PublishValidator validator, Executor writer,
                         NodeMetrics metrics, StreamLimits limits) {
        this.limits = limits;
        this.replicator = replicator;
        this.engine = engine;
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
        return replicator.propose(QueueCommands.publish(messages))
                .thenApply(reply -> {
                    metrics.recordPublish(messages, System.nanoTime() - started);
                    return toResponse(reply);
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
            cancel = engine.cancelKeyed(request.getTopic(), request.getKey());
        } else {
            cancel = engine.cancel(request.getTopic(), PublishValidator.messageId(request.getId(), "message id"));
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
        return new SubscribeSession(engine, validator, (ServerCallStreamObserver<SubscribeResponse>) out, writer, metrics,
                limits);
    }
}
