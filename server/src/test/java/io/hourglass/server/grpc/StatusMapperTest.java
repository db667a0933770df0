package io.hourglass.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.QuotaFailure;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.FailedPreconditionException;
import io.hourglass.core.HourglassException;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.UnavailableException;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every domain exception has one status, and its message is the description the client reads; a
 * redirect to the leader and an exceeded limit also carry the {@code google.rpc} error details.
 */
@Timeout(10)
class StatusMapperTest {
    private static void assertMaps(Status.Code code, Throwable error, String description) {
        Status s = StatusMapper.toStatus(error).getStatus();
        assertEquals(code, s.getCode(), error::toString);
        assertEquals(description, s.getDescription());
    }

    @Test
    void notFoundIsNotFound() {
        assertMaps(Status.Code.NOT_FOUND, new NotFoundException("no topic 'x'"), "no topic 'x'");
    }

    @Test
    void alreadyExistsIsAlreadyExists() {
        assertMaps(Status.Code.ALREADY_EXISTS, new AlreadyExistsException("n2 is already a member"), "n2 is already a member");
    }

    @Test
    void failedPreconditionIsFailedPrecondition() {
        assertMaps(Status.Code.FAILED_PRECONDITION, new FailedPreconditionException("n1 is the leader"), "n1 is the leader");
    }

    @Test
    void anInvalidRequestOrArgumentIsInvalidArgument() {
        assertMaps(Status.Code.INVALID_ARGUMENT, new InvalidRequestException("topic must not be empty"),
                "topic must not be empty");
        assertMaps(Status.Code.INVALID_ARGUMENT, new IllegalArgumentException("not a message id: 'zz'"),
                "not a message id: 'zz'");
    }

    @Test
    void notLeaderIsUnavailableWithTheLeaderTrailerWhenOneIsKnown() {
        StatusRuntimeException known = StatusMapper.toStatus(new NotLeaderException("127.0.0.1:7001"));
        assertEquals(Status.Code.UNAVAILABLE, known.getStatus().getCode());
        assertEquals("127.0.0.1:7001", known.getTrailers().get(StatusMapper.LEADER_KEY));

        StatusRuntimeException unknown = StatusMapper.toStatus(new NotLeaderException(null));
        assertEquals(Status.Code.UNAVAILABLE, unknown.getStatus().getCode());
        assertNull(unknown.getTrailers().get(StatusMapper.LEADER_KEY));
    }

    @Test
    void notLeaderAlsoCarriesAnErrorInfoNamingTheLeader() throws InvalidProtocolBufferException {
        StatusRuntimeException known = StatusMapper.toStatus(new NotLeaderException("127.0.0.1:7001"));
        com.google.rpc.Status details = StatusProto.fromThrowable(known);
        assertEquals(Status.Code.UNAVAILABLE.value(), details.getCode());
        assertEquals(known.getStatus().getDescription(), details.getMessage());
        assertEquals(1, details.getDetailsCount());
        ErrorInfo info = details.getDetails(0).unpack(ErrorInfo.class);
        assertEquals(StatusMapper.NOT_LEADER, info.getReason());
        assertEquals("hourglass.io", info.getDomain());
        assertEquals(Map.of("leader", "127.0.0.1:7001"), info.getMetadataMap());

        ErrorInfo noLeader = StatusProto.fromThrowable(StatusMapper.toStatus(new NotLeaderException(null)))
                .getDetails(0).unpack(ErrorInfo.class);
        assertEquals(StatusMapper.NOT_LEADER, noLeader.getReason());
        assertEquals(Map.of(), noLeader.getMetadataMap(), "no leader known: none named");
    }

    @Test
    void anotherUnavailableCarriesNoDetails() {
        assertNull(StatusMapper.toStatus(new UnavailableException("no quorum", null)).getTrailers());
        assertNull(StatusMapper.unavailable("room session closed: evicted", "127.0.0.1:7001").getTrailers()
                .get(StatusMapper.DETAILS_KEY));
    }

    @Test
    void anExceededLimitIsNamedInABadRequest() throws InvalidProtocolBufferException {
        Metadata trailers = new Metadata();
        Status closed = StatusMapper.closing(Status.INVALID_ARGUMENT.withDescription(
                "message 3: payload is 2000000 bytes; the limit is 1048576 (limits.maxPayloadBytes)"), trailers);
        assertEquals(Status.Code.INVALID_ARGUMENT, closed.getCode());
        com.google.rpc.Status details = trailers.get(StatusMapper.DETAILS_KEY);
        assertEquals(closed.getDescription(), details.getMessage());
        ErrorInfo info = details.getDetails(0).unpack(ErrorInfo.class);
        assertEquals(StatusMapper.LIMIT_EXCEEDED, info.getReason());
        assertEquals("hourglass.io", info.getDomain());
        assertEquals(Map.of("limit", "limits.maxPayloadBytes"), info.getMetadataMap());
        BadRequest.FieldViolation violation = details.getDetails(1).unpack(BadRequest.class).getFieldViolations(0);
        assertEquals(StatusMapper.LIMIT_EXCEEDED, violation.getReason());
        assertEquals(closed.getDescription(), violation.getDescription());

        Metadata ackTimeout = new Metadata();
        StatusMapper.closing(Status.INVALID_ARGUMENT.withDescription(
                "ack timeout 7200000ms exceeds rooms.maxAckTimeout (1h); use 0 for no ack timeout"), ackTimeout);
        assertEquals(Map.of("limit", "rooms.maxAckTimeout"), ackTimeout.get(StatusMapper.DETAILS_KEY).getDetails(0)
                .unpack(ErrorInfo.class).getMetadataMap());
    }

    @Test
    void aNodeLimitIsNamedInAQuotaFailure() throws InvalidProtocolBufferException {
        Metadata trailers = new Metadata();
        StatusMapper.closing(Status.RESOURCE_EXHAUSTED.withDescription("this node already serves 10000 consumers, "
                + "its limit (grpc.maxConsumers); close streams that are no longer needed"), trailers);
        com.google.rpc.Status details = trailers.get(StatusMapper.DETAILS_KEY);
        assertEquals(Map.of("limit", "grpc.maxConsumers"),
                details.getDetails(0).unpack(ErrorInfo.class).getMetadataMap());
        QuotaFailure.Violation violation = details.getDetails(1).unpack(QuotaFailure.class).getViolations(0);
        assertEquals("grpc.maxConsumers", violation.getQuotaId());
        assertTrue(violation.getDescription().startsWith("this node already serves"));
    }

    @Test
    void theLimitIsFoundEvenWhereBoundingCutsItFromTheDescription() throws InvalidProtocolBufferException {
        Metadata trailers = new Metadata();
        Status closed = StatusMapper.closing(Status.INVALID_ARGUMENT.withDescription("x".repeat(1000)
                + " (limits.maxTopicLength)"), trailers);
        assertTrue(closed.getDescription().length() <= StatusMapper.MAX_DESCRIPTION);
        assertEquals(Map.of("limit", "limits.maxTopicLength"), trailers.get(StatusMapper.DETAILS_KEY).getDetails(0)
                .unpack(ErrorInfo.class).getMetadataMap());
    }

    @Test
    void onlyARefusalForALimitGetsLimitDetails() {
        Metadata mentioned = new Metadata();
        StatusMapper.closing(Status.INVALID_ARGUMENT.withDescription(
                "client_timeout_ms must be 0 (the server's rooms.clientTimeout) or at least 1000, got -1"), mentioned);
        assertNull(mentioned.get(StatusMapper.DETAILS_KEY), "a setting mentioned is not a limit exceeded");
        Metadata otherCode = new Metadata();
        StatusMapper.closing(Status.DEADLINE_EXCEEDED.withDescription("no init frame within 10s (grpc.initTimeout)"),
                otherCode);
        assertNull(otherCode.get(StatusMapper.DETAILS_KEY));
        Metadata plain = new Metadata();
        StatusMapper.closing(Status.INVALID_ARGUMENT.withDescription("topic must not be empty"), plain);
        assertNull(plain.get(StatusMapper.DETAILS_KEY));
    }

    @Test
    void detailsAlreadySentAreKept() {
        StatusRuntimeException forwarded = StatusMapper.notLeader("not the leader", "127.0.0.1:7001");
        Metadata trailers = forwarded.getTrailers();
        com.google.rpc.Status before = trailers.get(StatusMapper.DETAILS_KEY);
        StatusMapper.closing(Status.INVALID_ARGUMENT.withDescription("x (limits.maxHeaders)"), trailers);
        assertEquals(before, trailers.get(StatusMapper.DETAILS_KEY));
    }

    @Test
    void unavailableIsUnavailable() {
        assertMaps(Status.Code.UNAVAILABLE, new UnavailableException("no quorum", null), "no quorum");
    }

    @Test
    void aStatusPassesUnchanged() {
        StatusRuntimeException forwarded = Status.NOT_FOUND.withDescription("from the leader").asRuntimeException();
        assertSame(forwarded, StatusMapper.toStatus(forwarded));
    }

    @Test
    void completionWrappersAreLookedThrough() {
        assertMaps(Status.Code.NOT_FOUND, new CompletionException(new ExecutionException(new NotFoundException("gone"))),
                "gone");
    }

    @Test
    void anythingElseIsInternalNotADomainCode() {
        assertEquals(Status.Code.INTERNAL, StatusMapper.toStatus(new IOException("disk")).getStatus().getCode());
        assertEquals(Status.Code.INTERNAL, StatusMapper.toStatus(new HourglassException("untyped")).getStatus().getCode());
        assertEquals(Status.Code.INTERNAL, StatusMapper.toStatus(new IllegalStateException("bug")).getStatus().getCode());
    }
}
