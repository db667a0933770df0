package io.hourglass.raft.disk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.server.raftlog.segmented.SegmentedRaftLogOutputStream;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log check on segment files written by Ratis' own writer: log_0-9, log_10-19 (closed) and
 * log_inprogress_20 (open, entries 20–25, preallocated with zeros), then damaged the ways a disk, a
 * human or a crash damages them.
 */
@Timeout(30)
final class RaftLogCheckTest {
    private static final long MAX_FRAME = 1 << 20;

    @TempDir
    Path dir;
    private Path current;
    /** Where each entry's frame starts in its file, by index; {@code ends[i]} where it ends. */
    private final long[] starts = new long[26];
    private final long[] ends = new long[26];

    @BeforeEach
    void writeLog() throws IOException {
        current = Files.createDirectories(dir.resolve("ratis/group/current"));
        write(current.resolve("log_0-9"), 0, 9, false);
        write(current.resolve("log_10-19"), 10, 19, false);
        write(current.resolve("log_inprogress_20"), 20, 25, true);
        Files.writeString(current.resolve("raft-meta"), "#\nterm=3\nvotedFor=n1\n");
    }

    private void write(Path file, long first, long last, boolean preallocate) throws IOException {
        try (SegmentedRaftLogOutputStream out = new SegmentedRaftLogOutputStream(file.toFile(), false, 1 << 20,
                preallocate ? 64 << 10 : 0, ByteBuffer.allocateDirect(1 << 16))) {
            for (long i = first; i <= last; i++) {
                out.write(entry(i));
                out.flush();
            }
        }
        // Frame offsets from the sizes the entries take (the header is 8 bytes).
        long pos = 8;
        for (long i = first; i <= last; i++) {
            int size = entry(i).getSerializedSize();
            starts[(int) i] = pos;
            pos += org.apache.ratis.thirdparty.com.google.protobuf.CodedOutputStream.computeUInt32SizeNoTag(size)
                    + size + 4;
            ends[(int) i] = pos;
        }
    }

    private static LogEntryProto entry(long index) {
        return LogEntryProto.newBuilder().setTerm(1).setIndex(index).setStateMachineLogEntry(
                StateMachineLogEntryProto.newBuilder().setLogData(ByteString.copyFromUtf8("message " + index + " "
                        + "x".repeat(200)))).build();
    }

    private List<String> check(long applied) throws IOException {
        return new RaftLogCheck("n1", dir, MAX_FRAME).check(current, applied).repairs();
    }

    private CorruptRaftLogException refused(long applied) {
        return assertThrows(CorruptRaftLogException.class, () -> check(applied));
    }

    private static void flip(Path file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 0xff);
        }
    }

    private static void cut(Path file, long length) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(length);
        }
    }

    @Test
    void aSoundLogPassesUntouched() throws IOException {
        assertEquals(List.of(), check(25));
        assertEquals(4, fileNames().size(), "three segments and raft-meta");
    }

    @Test
    void aFlippedByteInAClosedSegmentIsRefusedNamingTheFileTheEntryAndTheRepair() throws IOException {
        flip(current.resolve("log_10-19"), starts[14] + 40);
        CorruptRaftLogException e = refused(25);
        assertTrue(e.getMessage().contains("log_10-19") && e.getMessage().contains("index 14")
                && e.getMessage().contains("checksum mismatch"), e.getMessage());
        assertTrue(e.getMessage().contains("delete its data directory " + dir), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line");
    }

    @Test
    void aFlippedLengthByteInAClosedSegmentIsRefusedThoughRatisWouldReadItAsATornTail() throws IOException {
        flip(current.resolve("log_0-9"), starts[5]); // the entry now claims far more bytes than the file has
        assertTrue(refused(25).getMessage().contains("log_0-9"));
    }

    @Test
    void aClosedSegmentCutShortIsRefused() throws IOException {
        cut(current.resolve("log_10-19"), ends[16]);
        assertTrue(refused(25).getMessage().contains("up to index 16 only"), "three entries missing at its end");
        cut(current.resolve("log_0-9"), starts[3] + 10);
        assertTrue(refused(25).getMessage().contains("log_0-9"));
    }

    @Test
    void aMissingSegmentIsAGap() throws IOException {
        Files.delete(current.resolve("log_10-19"));
        assertTrue(refused(25).getMessage().contains("ends at 9"));
    }

    @Test
    void aLogStartingAfterWhatTheStoreHasAppliedIsRefused() throws IOException {
        Files.delete(current.resolve("log_0-9"));
        assertEquals(List.of(), check(9), "the store has applied 0..9: the log may start at 10");
        assertTrue(refused(5).getMessage().contains("applied only up to 5"));
    }

    @Test
    void anEmptyVoteFileIsRefused() throws IOException {
        Files.write(current.resolve("raft-meta"), new byte[0]);
        assertTrue(refused(25).getMessage().contains("raft-meta: it is empty"));
    }

    @Test
    void anOpenSegmentCutInsideItsLastEntryLosesOnlyThatEntry() throws IOException {
        Path open = current.resolve("log_inprogress_20");
        cut(open, starts[25] + 30);
        List<String> repairs = check(24);
        assertEquals(1, repairs.size(), repairs.toString());
        assertTrue(repairs.get(0).contains("torn tail") && repairs.get(0).contains("20..24"), repairs.toString());
        assertEquals(ends[24], Files.size(open), "cut at the end of the last whole entry");
        assertEquals(List.of(), check(24), "the repaired log passes");
    }

    @Test
    void aCutSaysWhereTheLogNowEnds() throws IOException {
        cut(current.resolve("log_inprogress_20"), starts[25] + 30);
        assertEquals(java.util.OptionalLong.of(24), new RaftLogCheck("n1", dir, MAX_FRAME).check(current, 24).cutAt());
        assertEquals(java.util.OptionalLong.empty(), new RaftLogCheck("n1", dir, MAX_FRAME).check(current, 24).cutAt(),
                "nothing more to cut");
    }

    @Test
    void aTornLastEntryFollowedByPreallocatedZerosIsCutToo() throws IOException {
        Path open = current.resolve("log_inprogress_20");
        long size = Files.size(open);
        cut(open, starts[25] + 30);
        cut(open, size); // what a write torn before its end leaves in a preallocated file: zeros
        assertEquals(1, check(24).size());
        assertEquals(ends[24], Files.size(open));
    }

    @Test
    void aBadEntryInTheOpenSegmentWithEntriesAfterItIsRefused() throws IOException {
        flip(current.resolve("log_inprogress_20"), starts[22] + 40);
        CorruptRaftLogException e = refused(25);
        assertTrue(e.getMessage().contains("log_inprogress_20") && e.getMessage().contains("data follows it"),
                e.getMessage());
    }

    @Test
    void anOpenSegmentEndingBeforeTheAppliedIndexIsClosedSoThatRatisPurgesIt() throws IOException {
        cut(current.resolve("log_inprogress_20"), starts[23] + 5);
        List<String> repairs = check(25);
        assertEquals(2, repairs.size(), repairs.toString());
        assertEquals(List.of("log_0-9", "log_10-19", "log_20-22", "raft-meta"), fileNames());
        assertEquals(List.of(), check(25), "the repaired log passes");
    }

    @Test
    void anOpenSegmentTornBeforeItsFirstEntryIsDeleted() throws IOException {
        cut(current.resolve("log_inprogress_20"), starts[20] + 3);
        assertEquals(1, check(19).size());
        assertEquals(List.of("log_0-9", "log_10-19", "raft-meta"), fileNames());
    }

    private List<String> fileNames() throws IOException {
        List<String> names = new ArrayList<>();
        try (var files = Files.list(current)) {
            files.map(p -> p.getFileName().toString()).sorted().forEach(names::add);
        }
        return names;
    }
}
