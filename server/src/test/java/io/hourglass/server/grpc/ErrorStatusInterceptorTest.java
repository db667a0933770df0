package io.hourglass.server.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.FailedPreconditionException;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.server.config.GrpcConfig;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A unary handler refuses by throwing: over a real client port ({@link ClientPort}, Netty on a loopback
 * port), the client reads the exception's status and message, bounded, instead of UNKNOWN — and, for a
 * redirect to the leader or an exceeded limit, the {@code google.rpc} error details.
 */
@Timeout(60)
class ErrorStatusInterceptorTest {
    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };
    /** Throws what the request names; "answer-then-throw" answers first. */
    private static final MethodDescriptor<byte[], byte[]> REFUSE = MethodDescriptor.newBuilder(BYTES, BYTES)
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("test.Errors/Refuse").build();
    private static final String HUGE = "x".repeat(1 << 20);

    private static ExecutorService calls;
    private static Server server;
    private static ManagedChannel channel;

    @BeforeAll
    static void start() throws IOException {
        calls = Executors.newFixedThreadPool(2);
        ServerServiceDefinition errors = ServerServiceDefinition.builder("test.Errors")
                .addMethod(REFUSE, ServerCalls.asyncUnaryCall(ErrorStatusInterceptorTest::refuse)).build();
        server = ClientPort.builder("127.0.0.1", 0, GrpcConfig.DEFAULTS, calls, 4 << 20, null).addService(errors).build().start();
        channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        calls.shutdownNow();
    }

    private static void refuse(byte[] request, StreamObserver<byte[]> out) {
        switch (new String(request, StandardCharsets.UTF_8)) {
            case "not-found" -> throw new NotFoundException("no topic 'orders'");
            case "already-exists" -> throw new AlreadyExistsException("n2 is already a member of the cluster");
            case "failed-precondition" -> throw new FailedPreconditionException("n1 is the leader");
            case "invalid" -> throw new InvalidRequestException("topic must not be empty");
            case "too-big" -> throw new InvalidRequestException("payload is 9 bytes; the limit is 8 (limits.maxPayloadBytes)");
            case "not-leader" -> throw new NotLeaderException("127.0.0.1:7002");
            case "huge" -> throw new NotFoundException("no topic '" + HUGE + "'");
            case "bug" -> throw new IllegalStateException("a bug");
            case "answer-then-throw" -> {
                out.onNext(request);
                out.onCompleted();
                throw new NotFoundException("too late");
            }
            default -> {
                out.onNext(request);
                out.onCompleted();
            }
        }
    }

    private static byte[] call(String request) {
        return ClientCalls.blockingUnaryCall(channel, REFUSE, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
                request.getBytes(StandardCharsets.UTF_8));
    }

    private static StatusRuntimeException refusal(String request) {
        return assertThrows(StatusRuntimeException.class, () -> call(request));
    }

    private static void assertRefused(Status.Code code, String description, String request) {
        Status s = refusal(request).getStatus();
        assertEquals(code, s.getCode(), s::toString);
        assertEquals(description, s.getDescription());
    }

    @Test
    void eachDomainExceptionReachesTheClientAsItsStatusAndMessage() {
        assertRefused(Status.Code.NOT_FOUND, "no topic 'orders'", "not-found");
        assertRefused(Status.Code.ALREADY_EXISTS, "n2 is already a member of the cluster", "already-exists");
        assertRefused(Status.Code.FAILED_PRECONDITION, "n1 is the leader", "failed-precondition");
        assertRefused(Status.Code.INVALID_ARGUMENT, "topic must not be empty", "invalid");
    }

    @Test
    void notLeaderCarriesTheLeaderTrailer() {
        StatusRuntimeException e = refusal("not-leader");
        assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
        assertEquals("127.0.0.1:7002", e.getTrailers().get(StatusMapper.LEADER_KEY));
    }

    @Test
    void notLeaderCarriesAnErrorInfoBesideTheTrailer() throws InvalidProtocolBufferException {
        StatusRuntimeException e = refusal("not-leader");
        com.google.rpc.Status details = StatusProto.fromThrowable(e);
        assertEquals(Status.Code.UNAVAILABLE.value(), details.getCode());
        ErrorInfo info = details.getDetails(0).unpack(ErrorInfo.class);
        assertEquals("NOT_LEADER", info.getReason());
        assertEquals("hourglass.io", info.getDomain());
        assertEquals(Map.of("leader", "127.0.0.1:7002"), info.getMetadataMap());
        assertEquals("127.0.0.1:7002", e.getTrailers().get(StatusMapper.LEADER_KEY), "the trailer stays for old clients");
    }

    @Test
    void anExceededLimitIsNamedInTheErrorDetails() throws InvalidProtocolBufferException {
        StatusRuntimeException e = refusal("too-big");
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
        assertEquals("payload is 9 bytes; the limit is 8 (limits.maxPayloadBytes)", e.getStatus().getDescription());
        com.google.rpc.Status details = StatusProto.fromThrowable(e);
        assertEquals(Map.of("limit", "limits.maxPayloadBytes"),
                details.getDetails(0).unpack(ErrorInfo.class).getMetadataMap());
        assertEquals("LIMIT_EXCEEDED", details.getDetails(1).unpack(BadRequest.class).getFieldViolations(0).getReason());
        assertEquals(0, StatusProto.fromThrowable(refusal("invalid")).getDetailsCount(), "a refusal for no limit has none");
    }

    @Test
    void aMessageQuotingHugeInputIsBoundedNotAHeaderOverflow() {
        Status s = refusal("huge").getStatus();
        assertEquals(Status.Code.NOT_FOUND, s.getCode(), s::toString);
        assertTrue(s.getDescription().length() <= StatusMapper.MAX_DESCRIPTION, s::toString);
        assertTrue(s.getDescription().startsWith("no topic 'xxx"), s::toString);
    }

    @Test
    void anUnexpectedExceptionIsInternalNotUnknown() {
        Status s = refusal("bug").getStatus();
        assertEquals(Status.Code.INTERNAL, s.getCode(), s::toString);
    }

    @Test
    void aHandlerThatAnsweredKeepsItsAnswerWhenItThrowsAfterwards() {
        assertArrayEquals("answer-then-throw".getBytes(StandardCharsets.UTF_8), call("answer-then-throw"));
        assertArrayEquals("ok".getBytes(StandardCharsets.UTF_8), call("ok"), "the port still serves");
    }
}
