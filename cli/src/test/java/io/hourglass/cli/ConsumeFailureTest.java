package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A consumer that could not consume says so, whatever --timeout says: --timeout ends only a working stream. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ConsumeFailureTest {
    @Test
    void aDeadServerIsExitFourAlthoughTimeoutIsShorterThanDeadline() {
        String dead = "127.0.0.1:" + TestNode.freePort();
        Cli.Result r = Cli.runWith(ClientFactory.grpc(), "", "--servers", dead, "--deadline", "3s",
                "consume", "orders", "--timeout", "1s");
        assertEquals(ExitCodes.UNAVAILABLE, r.exitCode(), r.err());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().contains("no server accepted the subscription"), r.err());
        assertEquals("", r.out());
    }

    @Test
    void anInvalidTopicIsExitThree(@TempDir Path dir) {
        try (TestNode node = TestNode.start(dir)) {
            Cli.Result r = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(),
                    "consume", "bad topic!", "--timeout", "2s");
            assertEquals(ExitCodes.INVALID_REQUEST, r.exitCode(), r.err());
            assertEquals(1, r.errLines().size(), r.err());
        }
    }

    @Test
    void timeoutStillEndsAWorkingStreamWithExitZero(@TempDir Path dir) {
        try (TestNode node = TestNode.start(dir)) {
            Cli.Result r = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(),
                    "consume", "quiet", "--timeout", "500ms");
            assertEquals(0, r.exitCode(), r.err());
            assertEquals("", r.err());
        }
    }
}
