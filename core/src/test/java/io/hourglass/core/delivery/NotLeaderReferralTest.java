package io.hourglass.core.delivery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.hourglass.core.NotLeaderException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whom an engine that is not leading refers a Subscribe to. A follower names the leader. A node that
 * Raft already made the (ready) leader, whose engine has not been told yet, names nobody rather than
 * itself: "the leader is the server you asked" sent clients around the other servers and back,
 * hundreds of ms after a failover, where "no leader known" makes the server's Subscribe wait a few
 * ms for its engine.
 */
class NotLeaderReferralTest {
    @TempDir
    Path dir;
    private DeliveryFixture f;

    @AfterEach
    void close() {
        f.close();
    }

    private Optional<String> refusalHint() {
        CompletionException e = assertThrows(CompletionException.class,
                () -> f.engine.subscribe("t", "", new DeliveryFixture.TestConsumer(), 0).join());
        return assertInstanceOf(NotLeaderException.class, e.getCause()).leaderHint();
    }

    @Test
    void aFollowerNamesTheLeaderAndALeaderWhoseEngineIsNotToldYetNamesNoOne() {
        f = new DeliveryFixture(dir, DeliveryFixture.config(1024, 16));
        f.engine.setLeading(false);

        f.replicator.role(false, "127.0.0.1:7002");
        assertEquals(Optional.of("127.0.0.1:7002"), refusalHint(), "a follower names the leader");

        f.replicator.role(true, "127.0.0.1:7001");
        assertEquals(Optional.empty(), refusalHint(), "Raft's leader, engine not leading yet: no one, not itself");
    }
}
