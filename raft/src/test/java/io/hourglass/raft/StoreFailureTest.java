package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import io.hourglass.testing.TestPorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.ratis.util.LifeCycle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store that fails under a running single-node group (its RocksDB directory deleted, as when a
 * node's data directory is wiped while it shuts down) stops the node once, with one ERROR of our
 * own, instead of Ratis' apply thread retrying the failed flush in a loop (it once logged
 * "flush failed … No such file or directory" until 58 GB of disk were full, and never closed).
 */
@Timeout(120)
class StoreFailureTest {
    /** Ratis logs one ERROR per entry it could not apply; a loop would log thousands a second. */
    private static final long ERROR_BOUND = 10;
    private static final int SNAPSHOT_EVERY = 100;

    @TempDir
    Path dir;
    private EventStore store;
    private RaftNode node;
    private LogCounter log;
    private final List<Leadership> changes = new CopyOnWriteArrayList<>();
    private final List<Throwable> failures = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws IOException {
        store = EventStore.open(dir.resolve("db"));
        RaftConfig config = RaftConfig.from(new Settings(Map.of("raft.port", Integer.toString(TestPorts.next()),
                "raft.requestTimeout", "3s", "raft.snapshotEveryEntries", Integer.toString(SNAPSHOT_EVERY))), dir, 7070);
        node = new RaftNode(config, "127.0.0.1", 7070, new StateApplier(store), Clock.systemUTC(), 1 << 20,
                ProposalObserver.NONE);
        node.addLeadershipListener(changes::add);
        node.addFailureListener(failures::add);
        node.start();
        await().atMost(Duration.ofSeconds(30)).until(node::isLeader);
        for (int i = 0; i < 5; i++) {
            put("m" + i);
        }
        log = LogCounter.attach();
    }

    @AfterEach
    void stop() throws IOException {
        if (log != null) {
            log.close();
        }
        if (node != null) {
            node.close();
        }
        if (store != null) {
            store.close();
        }
    }

    private CompletableFuture<?> propose(String payload) {
        return node.propose(Command.newBuilder().setPut(PutCmd.newBuilder().addMessages(NewMessage.newBuilder()
                .setTopic("t").setPayload(ByteString.copyFromUtf8(payload)))).build());
    }

    private void put(String payload) {
        propose(payload).join();
    }

    private void deleteStoreDirectory() throws IOException {
        try (Stream<Path> files = Files.walk(dir.resolve("db"))) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }

    /** No new ERROR for a second (a loop would log thousands in it), within 20 s. */
    private void awaitQuiet() {
        AtomicLong last = new AtomicLong(-1);
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofSeconds(1))
                .until(() -> last.getAndSet(log.errors()) == log.errors());
    }

    @Test
    void storeGoneWhileTheNodeShutsDownStillLetsItClose() throws Exception {
        deleteStoreDirectory();
        // Closing takes a snapshot (a store sync, which checks its directory), which now fails.
        CompletableFuture<Void> closed = CompletableFuture.runAsync(() -> {
            try {
                node.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        closed.get(30, TimeUnit.SECONDS);
        awaitQuiet();
        assertEquals(1, log.errorsFrom("FailStop"), log::describe);
        assertTrue(log.errors() <= ERROR_BOUND, log::describe);
        assertTrue(node.failure().isPresent());
    }

    @Test
    void storeFailingUnderARunningNodeStopsItOnce() throws Exception {
        deleteStoreDirectory();
        // Writes still go to the open (now unlinked) RocksDB log; the automatic snapshot after
        // SNAPSHOT_EVERY entries syncs the store, which fails: the node stops by itself.
        for (int i = 0; i < 2 * SNAPSHOT_EVERY && failures.isEmpty(); i++) {
            try {
                put("after-delete-" + i);
            } catch (CompletionException e) {
                break; // the node is stopping
            }
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> !failures.isEmpty());
        await().atMost(Duration.ofSeconds(30)).until(() ->
                node.server().getLifeCycleState() == LifeCycle.State.CLOSED);
        assertFalse(node.isLeader(), "a stopped node does not lead");
        assertFalse(changes.get(changes.size() - 1).leading(), "the listeners heard it stopped leading: " + changes);
        CompletionException refused = assertThrows(CompletionException.class, () -> put("after"));
        assertTrue(refused.getCause() instanceof UnavailableException, refused.toString());

        // Requests that were in flight end within their retry budget; then the node is silent.
        awaitQuiet();
        assertEquals(1, log.errorsFrom("FailStop"), log::describe);
        assertTrue(log.errors() <= ERROR_BOUND, log::describe);
        assertEquals(1, failures.size(), "the failure listeners are told once");
    }

    /**
     * Ratis' log worker closes its division on an unexpected exception (an assertion after a
     * checkpoint install, once in a chaos run): the node must stop, so that its supervisor
     * restarts it, rather than run on with no group, never ready again.
     */
    @Test
    void aDivisionRatisClosesOnItsOwnStopsTheNode() throws Exception {
        var groupId = node.server().getGroupIds().iterator().next();
        node.server().getDivision(groupId).close(); // what SegmentedRaftLogWorker does on an exception
        await().atMost(Duration.ofSeconds(30)).until(() -> !failures.isEmpty());
        await().atMost(Duration.ofSeconds(30)).until(() ->
                node.server().getLifeCycleState() == LifeCycle.State.CLOSED);
        assertTrue(node.failureReason().orElseThrow().contains("Ratis closed it"), node.failureReason().toString());
        assertEquals(1, failures.size(), "the failure listeners are told once");
        assertEquals(1, log.errorsFrom("FailStop"), log::describe);
    }
}
