package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.Settings;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventStore;
import io.hourglass.raft.disk.CorruptRaftLogException;
import io.hourglass.testing.TestPorts;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single-node group restarted on a log damaged while it was down: a flipped byte in a closed
 * segment stops {@link RaftNode#start()} with a {@link CorruptRaftLogException} before Ratis runs; an
 * open segment cut inside its last entry — below what the store applied, the case that left Ratis 3.2
 * failing every append with "gap between entries" — starts, leads and takes new entries.
 */
@Timeout(120)
class DamagedLogStartTest {
    @TempDir
    Path dir;
    private final int port = TestPorts.next();
    private EventStore store;
    private RaftNode node;

    @BeforeEach
    void writeALog() throws IOException {
        open();
        startAndLead();
        for (int i = 0; i < 60; i++) {
            put("m" + i + " " + "x".repeat(2000));
        }
        // More until the open segment holds a few entries (one just rolled holds none).
        for (int i = 0; i < 100 && lastFrameStart(segments("log_inprogress_").get(0)) < 5_000; i++) {
            put("n" + i + " " + "x".repeat(2000));
        }
        close();
    }

    @AfterEach
    void close() throws IOException {
        try {
            if (node != null) {
                node.close();
            }
        } finally {
            if (store != null) {
                store.close();
            }
            node = null;
            store = null;
        }
    }

    private void open() throws IOException {
        store = EventStore.open(dir.resolve("db"));
        RaftConfig config = RaftConfig.from(new Settings(Map.of("raft.port", Integer.toString(port),
                "raft.logSegmentBytes", "65536", "node.minFreeDiskMb", "0")), dir, 7070);
        node = new RaftNode(config, "127.0.0.1", 7070, new StateApplier(store), Clock.systemUTC(), 1 << 20,
                ProposalObserver.NONE);
    }

    private void startAndLead() throws IOException {
        node.start();
        await().atMost(Duration.ofSeconds(30)).until(node::isLeader);
    }

    private void put(String payload) {
        node.propose(Command.newBuilder().setPut(PutCmd.newBuilder().addMessages(NewMessage.newBuilder()
                .setTopic("t").setPayload(ByteString.copyFromUtf8(payload)))).build()).join();
    }

    private List<Path> segments(String prefix) throws IOException {
        try (Stream<Path> files = Files.walk(dir.resolve("ratis"))) {
            return files.filter(p -> p.getFileName().toString().startsWith(prefix)).sorted().toList();
        }
    }

    /** Where the last entry of a segment starts. */
    private static long lastFrameStart(Path segment) throws IOException {
        List<Integer> starts = frameStarts(segment);
        return starts.isEmpty() ? -1 : starts.get(starts.size() - 1);
    }

    /** Where each entry of a segment starts: frames are a varint length, the entry, a 4-byte CRC. */
    private static List<Integer> frameStarts(Path segment) throws IOException {
        byte[] b = Files.readAllBytes(segment);
        int pos = 8;
        List<Integer> starts = new java.util.ArrayList<>();
        while (pos < b.length && b[pos] != 0) {
            long length = 0;
            int shift = 0;
            int p = pos;
            int x;
            do {
                x = b[p++] & 0xff;
                length |= (long) (x & 0x7f) << shift;
                shift += 7;
            } while ((x & 0x80) != 0);
            starts.add(pos);
            pos = (int) (p + length + 4);
        }
        return starts;
    }

    @Test
    void aFlippedByteInAClosedSegmentStopsTheStartBeforeRatisRuns() throws IOException {
        Path closed = segments("log_").stream().filter(p -> !p.getFileName().toString().contains("inprogress"))
                .findFirst().orElseThrow();
        try (RandomAccessFile f = new RandomAccessFile(closed.toFile(), "rw")) {
            f.seek(f.length() / 2);
            int b = f.read();
            f.seek(f.length() / 2);
            f.write(b ^ 0xff);
        }
        open();
        CorruptRaftLogException e = assertThrows(CorruptRaftLogException.class, node::start);
        assertTrue(e.getMessage().contains(closed.getFileName().toString()), e.getMessage());
        assertTrue(!node.isLeader(), "never leads");
    }

    @Test
    void anOpenSegmentCutBelowWhatTheStoreAppliedStartsLeadsAndTakesNewEntries() throws IOException {
        long applied = EventStore.appliedIndexOf(dir.resolve("db")).index();
        Path open = segments("log_inprogress_").get(0);
        List<Integer> frames = frameStarts(open);
        try (RandomAccessFile f = new RandomAccessFile(open.toFile(), "rw")) {
            f.setLength(frames.get(frames.size() - 4) + 5); // three whole entries and a bit before the end
        }
        open();
        startAndLead();
        assertEquals(2, node.counters().logRepairs(), "the torn tail was cut and the segment closed behind the store");
        assertTrue(store.appliedIndex().index() >= applied, "nothing applied is lost");
        long restarted = store.appliedIndex().index();
        for (int i = 0; i < 5; i++) {
            put("after " + i);
        }
        assertTrue(store.appliedIndex().index() >= restarted + 5, "the new entries are in the store");
    }

    @Test
    void anOpenSegmentCutInsideItsLastEntryStartsLeadsAndTakesNewEntries() throws IOException {
        long applied = EventStore.appliedIndexOf(dir.resolve("db")).index();
        Path open = segments("log_inprogress_").get(0);
        try (RandomAccessFile f = new RandomAccessFile(open.toFile(), "rw")) {
            f.setLength(lastFrameStart(open) + 5); // inside the last entry (a 13-byte commit marker, or data)
        }
        open();
        startAndLead();
        assertTrue(node.counters().logRepairs() >= 1, "the torn tail was cut");
        assertTrue(store.appliedIndex().index() >= applied, "nothing applied is lost");
        long restarted = store.appliedIndex().index();
        for (int i = 0; i < 5; i++) {
            put("after " + i);
        }
        assertTrue(store.appliedIndex().index() >= restarted + 5, "the new entries are in the store");
    }
}
