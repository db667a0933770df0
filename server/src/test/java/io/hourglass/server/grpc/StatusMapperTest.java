package io.hourglass.server.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.hourglass.core.AlreadyExistsException;
import io.hourglass.core.FailedPreconditionException;
import io.hourglass.core.HourglassException;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.NotFoundException;
import io.hourglass.core.NotLeaderException;
import io.hourglass.core.UnavailableException;
import java.io.IOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Every domain exception has one status, and its message is the description the client reads. */
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
