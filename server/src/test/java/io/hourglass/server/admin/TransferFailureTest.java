package io.hourglass.server.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.hourglass.server.grpc.StatusMapper;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** What `cluster transfer-leader` answers when Ratis' transfer fails: never INTERNAL. */
class TransferFailureTest {
    @Test
    void aTransferWhoseElectionAnotherNodeWonIsRetryable() {
        Status s = StatusMapper.toStatus(TransferFailures.of("n1", new IOException("leadership transfer to n1 "
                + "failed: org.apache.ratis.protocol.exceptions.TransferLeadershipException: n3@group-C1A8289C016B: "
                + "Failed to transfer leadership to n1 (the current leader is n2): DIFFERENT_LEADER"))).getStatus();
        assertEquals(Status.Code.UNAVAILABLE, s.getCode(), s.toString());
        assertEquals("leadership went to another node than n1 in the transfer's election; ask again",
                s.getDescription());
    }

    @Test
    void anyOtherFailureSaysWhatHappenedAsAFailedPrecondition() {
        Status s = StatusMapper.toStatus(TransferFailures.of("n3", new IOException("leadership transfer to n3 "
                + "failed: org.apache.ratis.protocol.exceptions.TransferLeadershipException: n1@group-C1A8289C016B: "
                + "Failed to transfer leadership to n3 (the current leader is n1): TIMED_OUT(20s)"))).getStatus();
        assertEquals(Status.Code.FAILED_PRECONDITION, s.getCode(), s.toString());
        assertEquals("leadership did not move to n3: TIMED_OUT(20s)", s.getDescription());
        Status longId = StatusMapper.toStatus(TransferFailures.of("x".repeat(5000), new IOException("?")))
                .getStatus();
        assertTrue(longId.getDescription().length() < 200, "the id is cut to an excerpt: " + longId);
    }
}
