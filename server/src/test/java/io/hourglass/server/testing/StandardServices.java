package io.hourglass.server.testing;

import io.grpc.Channel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The client port's standard gRPC services called as tools call them: server reflection as
 * {@code grpcurl list} does (v1, and the v1alpha older tools speak), health as a kubelet's {@code grpc}
 * probe does. A refused call throws its {@link StatusRuntimeException}.
 */
public final class StandardServices {
    private static final long DEADLINE_SECONDS = 10;

    private StandardServices() {
    }

    /** The services {@code grpc.reflection.v1} lists. */
    public static List<String> listServices(Channel channel) {
        var reply = new CompletableFuture<io.grpc.reflection.v1.ServerReflectionResponse>();
        StreamObserver<io.grpc.reflection.v1.ServerReflectionRequest> requests = io.grpc.reflection.v1.ServerReflectionGrpc
                .newStub(channel).withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS).serverReflectionInfo(firstOf(reply));
        requests.onNext(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder().setListServices("").build());
        requests.onCompleted();
        return await(reply).getListServicesResponse().getServiceList().stream()
                .map(io.grpc.reflection.v1.ServiceResponse::getName).toList();
    }

    /** The services {@code grpc.reflection.v1alpha} lists. */
    public static List<String> listServicesV1Alpha(Channel channel) {
        var reply = new CompletableFuture<io.grpc.reflection.v1alpha.ServerReflectionResponse>();
        StreamObserver<io.grpc.reflection.v1alpha.ServerReflectionRequest> requests =
                io.grpc.reflection.v1alpha.ServerReflectionGrpc.newStub(channel)
                        .withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS).serverReflectionInfo(firstOf(reply));
        requests.onNext(io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder().setListServices("").build());
        requests.onCompleted();
        return await(reply).getListServicesResponse().getServiceList().stream()
                .map(io.grpc.reflection.v1alpha.ServiceResponse::getName).toList();
    }

    /** {@code grpc.health.v1.Health/Check} of {@code service} ({@code ""}: the whole server). */
    public static ServingStatus health(Channel channel, String service) {
        return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(DEADLINE_SECONDS, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
    }

    /** Completes {@code reply} with a stream's first message, or with its error. */
    private static <T> StreamObserver<T> firstOf(CompletableFuture<T> reply) {
        return new StreamObserver<>() {
            @Override
            public void onNext(T value) {
                reply.complete(value);
            }

            @Override
            public void onError(Throwable t) {
                reply.completeExceptionally(t);
            }

            @Override
            public void onCompleted() {
                reply.completeExceptionally(new AssertionError("the stream ended without a reply"));
            }
        };
    }

    private static <T> T await(CompletableFuture<T> reply) {
        try {
            return reply.get(DEADLINE_SECONDS + 5, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof StatusRuntimeException refused) {
                throw refused;
            }
            throw new AssertionError("reflection failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        } catch (TimeoutException e) {
            throw new AssertionError("no reflection reply within the deadline", e);
        }
    }
}
