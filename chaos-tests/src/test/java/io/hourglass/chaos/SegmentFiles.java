package io.hourglass.chaos;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A stopped node's Raft log segments, as files a test damages: {@code <data>/ratis/<group>/current/}
 * holds closed segments {@code log_<start>-<end>} and the open one {@code log_inprogress_<start>}.
 *
 * <p>The frame walk knows only what Ratis' segment format puts on disk — an 8-byte header
 * {@code RaftLog1}, then per entry a varint length, the entry, a 4-byte CRC, then zero padding —
 * and nothing of the server's own reader, so that a test does not check that reader with itself.
 */
public final class SegmentFiles {
    private static final Pattern CLOSED = Pattern.compile("log_(\\d+)-(\\d+)");
    private static final Pattern OPEN = Pattern.compile("log_inprogress_(\\d+)");
    private static final int HEADER = 8;

    private final Path current;

    private SegmentFiles(Path current) {
        this.current = current;
    }

    /**
     * The segments of event shard 0's group (not the metadata group's) of the node whose data
     * directory is {@code dataDir}; fails if it has no such group yet.
     */
    public static SegmentFiles of(Path dataDir) {
        Path group = shardZeroGroupDir(dataDir);
        if (!Files.isDirectory(group.resolve("current"))) {
            throw new IllegalStateException("no Raft group directory of shard 0 in " + group.getParent());
        }
        return new SegmentFiles(group.resolve("current"));
    }

    /** Where the node whose data directory is {@code dataDir} keeps event shard 0's Raft group. */
    public static Path shardZeroGroupDir(Path dataDir) {
        String id = java.util.UUID.nameUUIDFromBytes("hourglass-events-0".getBytes(java.nio.charset.StandardCharsets.UTF_8))
                .toString();
        return dataDir.resolve("ratis").resolve(id);
    }

    Path directory() {
        return current;
    }

    /** Closed segments, oldest first. */
    public List<Path> closed() {
        return list(CLOSED);
    }

    public Optional<Path> open() {
        return list(OPEN).stream().findFirst();
    }

    /** The start index in a segment's name. */
    static long startIndex(Path segment) {
        Matcher m = CLOSED.matcher(segment.getFileName().toString());
        if (m.matches()) {
            return Long.parseLong(m.group(1));
        }
        Matcher o = OPEN.matcher(segment.getFileName().toString());
        if (o.matches()) {
            return Long.parseLong(o.group(1));
        }
        throw new IllegalArgumentException("not a segment: " + segment);
    }

    private List<Path> list(Pattern pattern) {
        try (Stream<Path> files = Files.list(current)) {
            return files.filter(p -> pattern.matcher(p.getFileName().toString()).matches())
                    .sorted(Comparator.comparingLong(SegmentFiles::startIndex)).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Where each entry of {@code segment} starts, and its length on disk (varint, entry, CRC). */
    public record Frame(long offset, int length) {
        long end() {
            return offset + length;
        }
    }

    public static List<Frame> frames(Path segment) {
        try {
            byte[] b = Files.readAllBytes(segment);
            List<Frame> frames = new ArrayList<>();
            int i = HEADER;
            while (i < b.length && b[i] != 0) {
                long length = 0;
                int shift = 0;
                int j = i;
                while (true) {
                    int x = b[j++] & 0xff;
                    length |= (long) (x & 0x7f) << shift;
                    shift += 7;
                    if ((x & 0x80) == 0) {
                        break;
                    }
                }
                long end = j + length + 4;
                if (end > b.length) {
                    break; // a partial entry
                }
                frames.add(new Frame(i, (int) (end - i)));
                i = (int) end;
            }
            return frames;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Inverts every bit of the byte at {@code offset}. */
    public static void flipByte(Path file, long offset) {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 0xff);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Cuts {@code file} to {@code length} bytes. */
    public static void truncate(Path file, long length) {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(length);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
