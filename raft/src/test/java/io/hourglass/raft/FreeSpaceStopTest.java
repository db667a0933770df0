package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.UnavailableException;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.Settings;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.disk.DiskFullException;
import io.hourglass.testing.TestPorts;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.ratis.util.LifeCycle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A running node whose data directory has less free space than {@code node.minFreeDiskMb} (here: a
 * minimum no disk meets) stops within about a second, once, with one ERROR of its own, and refuses
 * proposals with UNAVAILABLE saying why.
 */
@Timeout(60)
class FreeSpaceStopTest {
    @TempDir
    Path dir;
    private EventStore store;
    private RaftNode node;

    @AfterEach
    void stop() throws IOException {
        try {
            if (node != null) {
                node.close();
            }
        } finally {
            if (store != null) {
                store.close();
            }
        }
    }

    @Test
    void aNodeShortOfDiskSpaceStopsOnceAndSaysWhyToItsClients() throws Exception {
        store = EventStore.open(dir.resolve("db"));
        RaftConfig config = RaftConfig.from(new Settings(Map.of("raft.port", Integer.toString(TestPorts.next()),
                "node.minFreeDiskMb", Integer.toString(Integer.MAX_VALUE))), dir, 7070);
        node = new RaftNode(config, "127.0.0.1", 7070, new StateApplier(store), Clock.systemUTC(), 1 << 20,
                ProposalObserver.NONE);
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        node.addFailureListener(failures::add);
        try (LogCounter log = LogCounter.attach()) {
            node.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> !failures.isEmpty());
            await().atMost(Duration.ofSeconds(20)).until(() ->
                    node.server().getLifeCycleState() == LifeCycle.State.CLOSED);
            assertTrue(failures.get(0) instanceof DiskFullException, failures.toString());
            CompletionException refused = assertThrows(CompletionException.class, () -> node.propose(Command.newBuilder()
                    .setPut(PutCmd.newBuilder().addMessages(NewMessage.newBuilder().setTopic("t")
                            .setPayload(ByteString.copyFromUtf8("x")))).build()).join());
            assertTrue(refused.getCause() instanceof UnavailableException, refused.toString());
            assertTrue(refused.getCause().getMessage().contains("node n1 stopped: the disk is full: the data directory " + dir.resolve("ratis"))
                    && refused.getCause().getMessage().contains("below node.minFreeDiskMb"), refused.getCause().getMessage());
            // Told once, though the watch looks every second: and it stays so.
            await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10))
                    .until(() -> failures.size() == 1 && log.errorsFrom("FailStop") == 1);
        }
    }
}
