package io.hourglass.raft.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;

/**
 * What one Raft log segment file holds, read frame by frame the way Ratis 3.2 writes it
 * ({@code SegmentedRaftLogOutputStream}): the 8-byte header {@code RaftLog1}, then per entry a varint
 * length, the {@code LogEntryProto}, and a big-endian CRC32C of the two; after the last entry zeros
 * (Ratis preallocates the file) or the end of the file.
 *
 * <p>The scan stops at the first entry it cannot take — cut off by the end of the file, failing its
 * checksum, unparseable, or not the next index — and records where that entry starts and whether only
 * zeros follow where it claims to end: a write torn by a crash looks like that, damage in the middle
 * does not. A closed segment is read up to the end index in its name (Ratis ignores what follows).
 *
 * @param validLength the offset just after the last entry taken (8 when none was, 0 when the header is bad)
 * @param lastIndex the index of the last entry taken, {@code start - 1} when none was
 * @param problem why the scan stopped before the end, or null
 */
record SegmentScan(Path file, long start, Long declaredEnd, int entries, long lastIndex, long validLength,
                   long fileLength, Problem problem) {
    static final byte[] HEADER = "RaftLog1".getBytes(StandardCharsets.US_ASCII);

    /**
     * @param offset where the entry (or header) that could not be taken starts
     * @param what what is wrong with it, for an operator
     * @param onlyZerosAfter nothing but zeros (or the end of the file) follows the entry's claimed end
     */
    record Problem(long offset, String what, boolean onlyZerosAfter) {
    }

    boolean open() {
        return declaredEnd == null;
    }

    /**
     * Reads {@code file}, whose name says it starts at {@code start} and, when closed, ends at
     * {@code declaredEnd}; an entry claiming more than {@code maxFrameBytes} counts as damaged.
     */
    static SegmentScan read(Path file, long start, Long declaredEnd, long maxFrameBytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size > Integer.MAX_VALUE) {
                throw new IOException(file + " is larger than any segment Hourglass writes: " + size + " bytes");
            }
            MappedByteBuffer b = ch.map(FileChannel.MapMode.READ_ONLY, 0, size);
            return new Reader(file, start, declaredEnd, maxFrameBytes, b).scan();
        }
    }

    /** One pass over a mapped file; not thread-safe. */
    private static final class Reader {
        private final Path file;
        private final long start;
        private final Long declaredEnd;
        private final long maxFrameBytes;
        private final ByteBuffer b;
        private final int size;
        private int entries;
        private long lastIndex;

        Reader(Path file, long start, Long declaredEnd, long maxFrameBytes, ByteBuffer b) {
            this.file = file;
            this.start = start;
            this.declaredEnd = declaredEnd;
            this.maxFrameBytes = maxFrameBytes;
            this.b = b;
            this.size = b.limit();
            this.lastIndex = start - 1;
        }

        SegmentScan scan() {
            int headerBytes = Math.min(size, HEADER.length);
            for (int i = 0; i < headerBytes; i++) {
                if (b.get(i) != HEADER[i]) {
                    // A header cut off by a crash leaves its first bytes and then zeros.
                    return stop(0, 0, "the header is not RaftLog1", zerosFrom(i));
                }
            }
            if (size < HEADER.length) {
                return stop(0, 0, "the header is cut off after " + size + " bytes", true);
            }
            int pos = HEADER.length;
            while (pos < size) {
                if (declaredEnd != null && lastIndex >= declaredEnd) {
                    return done(pos);
                }
                if (b.get(pos) == 0) {
                    int junk = firstNonZero(pos);
                    return junk < 0 ? done(pos)
                            : stop(pos, pos, "non-zero bytes at offset " + junk + " after the last entry", false);
                }
                long length = 0;
                int shift = 0;
                int p = pos;
                int x;
                do {
                    if (p >= size) {
                        return stop(pos, pos, "the file ends inside the entry's length", true);
                    }
                    x = b.get(p++) & 0xff;
                    length |= (long) (x & 0x7f) << shift;
                    shift += 7;
                } while ((x & 0x80) != 0 && shift < 35);
                if ((x & 0x80) != 0 || length == 0 || length + (p - pos) + 4 > maxFrameBytes) {
                    return stop(pos, pos, "an entry length of " + length + " bytes is impossible", false);
                }
                long end = p + length + 4;
                if (end > size) {
                    return stop(pos, pos, "the file ends inside the entry (" + (size - pos) + " of " + (end - pos)
                            + " bytes there)", true);
                }
                String bad = check(pos, p, (int) length);
                if (bad != null) {
                    return stop(pos, pos, bad, zerosFrom((int) end));
                }
                pos = (int) end;
            }
            return done(pos);
        }

        /** Null when the frame at {@code pos} (entry bytes from {@code body}) is the next entry. */
        private String check(int pos, int body, int length) {
            CRC32C crc = new CRC32C();
            crc.update(b.duplicate().position(pos).limit(body + length));
            int stored = b.getInt(body + length);
            if ((int) crc.getValue() != stored) {
                return String.format("checksum mismatch (computed %08X, stored %08X)", (int) crc.getValue(), stored);
            }
            LogEntryProto entry;
            try {
                entry = LogEntryProto.parseFrom(b.duplicate().position(body).limit(body + length));
            } catch (IOException e) {
                return "the entry does not parse: " + e.getMessage();
            }
            if (entry.getIndex() != lastIndex + 1) {
                return "it holds index " + entry.getIndex() + " where " + (lastIndex + 1) + " belongs";
            }
            lastIndex = entry.getIndex();
            entries++;
            return null;
        }

        private boolean zerosFrom(int from) {
            return firstNonZero(from) < 0;
        }

        private int firstNonZero(int from) {
            for (int i = Math.max(0, from); i < size; i++) {
                if (b.get(i) != 0) {
                    return i;
                }
            }
            return -1;
        }

        private SegmentScan done(int pos) {
            return new SegmentScan(file, start, declaredEnd, entries, lastIndex, pos, size, null);
        }

        private SegmentScan stop(int valid, int offset, String what, boolean onlyZerosAfter) {
            return new SegmentScan(file, start, declaredEnd, entries, lastIndex, valid, size,
                    new Problem(offset, what, onlyZerosAfter));
        }
    }
}
