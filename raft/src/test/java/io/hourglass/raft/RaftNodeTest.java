package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.InvalidRequestException;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.Settings;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.testing.TestPorts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.util.LifeCycle;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A one-node Ratis group over a real socket, applying to a real RocksDB. */
@Timeout(120)
class RaftNodeTest {
    @TempDir
    Path dir;
    private EventStore store;
    private RaftNode node;
    private final List<Long> appliedIndices = new CopyOnWriteArrayList<>();
    private int raftPort;

    private void start(long snapshotEvery) throws IOException {
        if (raftPort == 0) {
            raftPort = TestPorts.next();
        }
        store = EventStore.open(dir.resolve("db"));
        StateApplier applier = new StateApplier(store);
        applier.addListener(r -> appliedIndices.add(r.position().index()));
        RaftConfig config = RaftConfig.from(new Settings(Map.of("raft.port", Integer.toString(raftPort),
                "raft.snapshotEveryEntries", Long.toString(snapshotEvery), "raft.purgeGap", "10",
                "raft.logSegmentBytes", Integer.toString(64 << 10))), dir, 7070);
        node = new RaftNode(config, "127.0.0.1", 7070, applier, Clock.systemUTC(), 1 << 20, ProposalObserver.NONE);
        node.start();
        await().atMost(Duration.ofSeconds(30)).until(node::isLeader);
    }

    @AfterEach
    void stop() throws IOException {
        if (node != null) {
            node.close();
        }
        if (store != null) {
            store.close();
        }
    }

    private EventKey put(String payload) {
        Command c = Command.newBuilder().setPut(PutCmd.newBuilder().addMessages(NewMessage.newBuilder()
                .setTopic("t").setPayload(ByteString.copyFromUtf8(payload)))).build();
        return EventKey.fromBytes(node.propose(c).join().getPublishedKeys(0).toByteArray());
    }

    @Test
    void leaderStampsTimeAndRestartReplaysNothingAlreadyApplied() throws IOException {
        start(10_000);
        long before = System.currentTimeMillis();
        EventKey first = put("a");
        put("b");
        assertTrue(first.dueAtMs() >= before && first.dueAtMs() <= System.currentTimeMillis(), "stamped by the leader");
        long appliedBefore = store.appliedIndex().index();
        node.close();
        store.close();
        node = null;
        appliedIndices.clear();

        start(10_000);
        assertEquals(appliedBefore, store.appliedIndex().index(), "the store is where it was");
        assertTrue(appliedIndices.stream().allMatch(i -> i > appliedBefore), "no entry applied twice: " + appliedIndices);
        assertTrue(store.queue().message(first).isPresent());
        put("c");
        assertEquals(3, countMessages());
    }

    private int countMessages() {
        int[] n = {0};
        store.queue().scanAll((k, m) -> ++n[0] > 0);
        return n[0];
    }

    @Test
    void malformedProposalIsRefusedAndTheNodeKeepsServing() throws IOException {
        start(10_000);
        Command empty = Command.newBuilder().build();
        CompletionException e = assertThrows(CompletionException.class, () -> node.propose(empty).join());
        assertTrue(e.getCause() instanceof InvalidRequestException, e.toString());
        Command huge = Command.newBuilder().setPut(PutCmd.newBuilder().addMessages(NewMessage.newBuilder()
                .setTopic("t").setPayload(ByteString.copyFrom(new byte[(1 << 20) + 1])))).build();
        e = assertThrows(CompletionException.class, () -> node.propose(huge).join());
        assertTrue(e.getCause() instanceof InvalidRequestException, e.toString());
        put("still fine");
    }

    /** A malformed entry stops the node instead of being skipped, so that it cannot diverge. */
    @Test
    void malformedLogEntryStopsTheNode() throws IOException {
        start(10_000);
        TransactionContext trx = TransactionContext.newBuilder()
                .setStateMachine(node.stateMachine())
                .setServerRole(RaftPeerRole.FOLLOWER)
                .setLogEntry(LogEntryProto.newBuilder().setTerm(1).setIndex(1_000_000)
                        .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder()
                                .setLogData(org.apache.ratis.thirdparty.com.google.protobuf.ByteString.copyFromUtf8("garbage")))
                        .build())
                .build();
        CompletionException e = assertThrows(CompletionException.class, () -> node.stateMachine().applyTransaction(trx).join());
        assertTrue(e.getCause() instanceof StoreFailedException, e.toString());
        assertTrue(node.failure().isPresent());
        await().atMost(Duration.ofSeconds(30)).until(() -> node.server().getLifeCycleState() == LifeCycle.State.CLOSED);
        assertFalse(node.isLeader());
    }

    @Test
    void pauseRefusesToApplyAndReinitializeResumesFromTheStore() throws IOException {
        start(10_000);
        put("x");
        HourglassStateMachine sm = node.stateMachine();
        sm.pause();
        assertEquals(LifeCycle.State.PAUSED, sm.getLifeCycleState());
        TransactionContext trx = TransactionContext.newBuilder().setStateMachine(sm).setServerRole(RaftPeerRole.FOLLOWER)
                .setLogEntry(LogEntryProto.newBuilder().setTerm(1).setIndex(1_000_000)
                        .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder()).build()).build();
        assertThrows(IllegalStateException.class, () -> sm.applyTransaction(trx));
        sm.reinitialize();
        assertEquals(LifeCycle.State.RUNNING, sm.getLifeCycleState());
        // Resumed from the store's position; Ratis may apply a metadata entry (no command, so the
        // store does not move) right after, which moves only the state machine's index.
        long resumed = sm.getLastAppliedTermIndex().getIndex();
        assertTrue(resumed >= store.appliedIndex().index() && resumed <= store.appliedIndex().index() + 1,
                () -> "state machine at " + resumed + ", store at " + store.appliedIndex());
        put("y");
    }

    @Test
    void snapshotsSyncTheStoreWithoutFlushingItAndLetTheLogBePurged() throws IOException {
        start(100);
        String kb = "x".repeat(1024);
        for (int i = 0; i < 350; i++) {
            put(kb + i);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> node.stateMachine().snapshotsTaken() >= 3);
        await().atMost(Duration.ofSeconds(30)).until(() ->
                node.server().getDivision(RaftNode.GROUP_ID).getRaftLog().getStartIndex() > 0);
        var snapshot = node.stateMachine().getLatestSnapshot();
        assertTrue(snapshot.getIndex() >= 100 && snapshot.getFiles().isEmpty(), "the DB is the snapshot");
        assertTrue(Files.exists(dir.resolve("ratis")), "Ratis storage under the data directory");
        try (var files = Files.list(dir.resolve("db"))) {
            // A snapshot syncs the store's write-ahead log; waiting for a memtable flush (which writes
            // an SST file) held every node's apply thread at once for ~0.7 s.
            assertFalse(files.anyMatch(f -> f.toString().endsWith(".sst")), "no snapshot flushed the memtables");
        }
        node.close();
        store.close();
        node = null;
        start(100);
        assertEquals(350, countMessages(), "restart after purge recovers from the store, not the log");
    }
}
