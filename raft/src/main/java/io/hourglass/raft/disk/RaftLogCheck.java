package io.hourglass.raft.disk;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The check a node makes of its Raft log before Ratis opens it: it either starts on a log it can trust,
 * after cutting off what a crash tore, or does not start at all. See the package documentation for why.
 *
 * <ul>
 *   <li><b>Refused</b> ({@link CorruptRaftLogException}): anything wrong in a closed segment (a bad
 *       header, an entry failing its checksum or not parsing, an index out of sequence, fewer entries
 *       than its name says); a gap between segments, or a log that starts after the entries the store
 *       has applied; a bad entry in the open segment that has data after it; an empty or unreadable
 *       {@code raft-meta} (the node's term and vote: Ratis leaves it empty when it wrote it on a full
 *       disk).</li>
 *   <li><b>Repaired</b>, with a WARN each: the open segment's torn tail — a last entry cut off by the
 *       end of the file, or failing its checksum with nothing but zeros after it — is cut off (Ratis
 *       3.2 drops the first kind itself but refuses to start on the second); and an open segment that
 *       ends before the store's applied index is closed under its real end index, so that Ratis purges
 *       it as covered by the snapshot (left open, Ratis 3.2 starts, then fails every append with "gap
 *       between entries" and the node never catches up).</li>
 * </ul>
 *
 * <p>Reads every segment once: about as much as Ratis reads itself to open the log.
 */
public final class RaftLogCheck {
    private static final Logger LOG = LoggerFactory.getLogger(RaftLogCheck.class);
    private static final Pattern CLOSED = Pattern.compile("log_(\\d+)-(\\d+)");
    private static final Pattern OPEN = Pattern.compile("log_inprogress_(\\d+)");

    private final String nodeId;
    private final Path dataDir;
    private final long maxFrameBytes;

    /**
     * @param dataDir the node's data directory, named in the repair advice
     * @param maxFrameBytes the largest entry Ratis may have written (its write buffer)
     */
    public RaftLogCheck(String nodeId, Path dataDir, long maxFrameBytes) {
        this.nodeId = nodeId;
        this.dataDir = dataDir;
        this.maxFrameBytes = maxFrameBytes;
    }

    /**
     * What a check did.
     *
     * @param repairs the repairs made, one line each
     * @param cutAt the index of the last entry kept in the open segment when a torn tail was cut off it
     *        (entries this node had acknowledged may be gone); empty when nothing was cut
     */
    public record Result(List<String> repairs, OptionalLong cutAt) {
        public Result {
            repairs = List.copyOf(repairs);
        }
    }

    /**
     * Checks (and repairs) the log in {@code current}, Ratis' {@code <storage>/<group>/current}
     * directory, against the store's applied index.
     *
     * @throws CorruptRaftLogException when the node must not start on this log
     */
    public Result check(Path current, long appliedIndex) throws IOException {
        List<String> repairs = new ArrayList<>();
        OptionalLong cutAt = OptionalLong.empty();
        if (!Files.isDirectory(current)) {
            return new Result(repairs, cutAt);
        }
        checkVoteFile(current.resolve("raft-meta"));
        List<SegmentScan> scans = scanAll(current);
        SegmentScan previous = null;
        for (int i = 0; i < scans.size(); i++) {
            SegmentScan s = scans.get(i);
            if (s.open() && i != scans.size() - 1) {
                throw corrupt(s.file(), "an open segment followed by " + scans.get(i + 1).file().getFileName()
                        + ": only the last segment is ever open");
            }
            if (previous == null && s.start() > appliedIndex + 1) {
                throw corrupt(s.file(), "the log starts at index " + s.start() + " but the store has applied only up to "
                        + appliedIndex + ": the entries between are in no file of this node");
            }
            if (previous != null && s.start() != previous.lastIndex() + 1) {
                throw corrupt(s.file(), "it starts at index " + s.start() + " but the segment before it, "
                        + previous.file().getFileName() + ", ends at " + previous.lastIndex());
            }
            if (!s.open()) {
                checkClosed(s);
                previous = s;
            } else {
                repairs.addAll(repairOpen(s, appliedIndex));
                if (s.problem() != null) {
                    cutAt = OptionalLong.of(s.lastIndex());
                }
            }
        }
        return new Result(repairs, cutAt);
    }

    private void checkClosed(SegmentScan s) {
        if (s.problem() != null) {
            throw corrupt(s.file(), where(s) + ": " + s.problem().what()
                    + " (a closed segment is never written again, so this is damage, not a torn write)");
        }
        if (s.lastIndex() != s.declaredEnd()) {
            throw corrupt(s.file(), "it holds entries up to index " + s.lastIndex() + " only, its name says "
                    + s.declaredEnd() + " (the file was cut short)");
        }
    }

    private List<String> repairOpen(SegmentScan s, long appliedIndex) throws IOException {
        List<String> repairs = new ArrayList<>();
        SegmentScan.Problem p = s.problem();
        if (p != null && !p.onlyZerosAfter()) {
            throw corrupt(s.file(), where(s) + ": " + p.what() + ", and data follows it: not a write torn by a crash");
        }
        if (p != null) {
            String repair = "cut the torn tail of " + s.file().getFileName() + " at byte " + s.validLength() + " ("
                    + (s.fileLength() - s.validLength()) + " bytes from the entry at byte " + p.offset() + ": "
                    + p.what() + "); entries " + s.start() + ".." + s.lastIndex() + " stay";
            if (s.entries() == 0) {
                Files.delete(s.file());
                repair = "deleted " + s.file().getFileName() + ", torn before its first entry (" + p.what() + ")";
            } else {
                try (FileChannel ch = FileChannel.open(s.file(), StandardOpenOption.WRITE)) {
                    ch.truncate(s.validLength());
                    ch.force(true);
                }
            }
            LOG.warn("{}: Raft log: {} — what a crash during a write leaves; the leader sends these entries again",
                    nodeId, repair);
            repairs.add(repair);
        }
        if (s.entries() > 0 && s.lastIndex() < appliedIndex) {
            Path closed = s.file().resolveSibling("log_" + s.start() + "-" + s.lastIndex());
            Files.move(s.file(), closed, StandardCopyOption.ATOMIC_MOVE);
            String repair = "closed " + s.file().getFileName() + " as " + closed.getFileName() + ": it ends at index "
                    + s.lastIndex() + ", before the store's applied index " + appliedIndex + ", so Ratis purges it";
            LOG.warn("{}: Raft log: {}", nodeId, repair);
            repairs.add(repair);
        }
        return repairs;
    }

    private static String where(SegmentScan s) {
        return "the entry at byte " + s.problem().offset() + " (index " + (s.lastIndex() + 1) + ")";
    }

    /** Ratis writes {@code term=} and {@code votedFor=} as properties; a failed write on a full disk leaves 0 bytes. */
    private void checkVoteFile(Path meta) throws IOException {
        if (!Files.exists(meta)) {
            return;
        }
        String text = Files.readString(meta, StandardCharsets.ISO_8859_1);
        if (!text.contains("term=") || !text.contains("votedFor")) {
            throw corrupt(meta, (text.isEmpty() ? "it is empty" : "it holds no term and vote")
                    + ": this node's term and vote are lost (Ratis leaves the file so when it wrote it on a full disk),"
                    + " and a node that forgot its vote could vote twice in one term");
        }
    }

    private List<SegmentScan> scanAll(Path current) throws IOException {
        List<SegmentScan> scans = new ArrayList<>();
        try (Stream<Path> files = Files.list(current)) {
            for (Path f : files.sorted(Comparator.comparing(Path::toString)).toList()) {
                String name = f.getFileName().toString();
                Matcher closed = CLOSED.matcher(name);
                Matcher open = OPEN.matcher(name);
                if (closed.matches()) {
                    scans.add(SegmentScan.read(f, Long.parseLong(closed.group(1)), Long.parseLong(closed.group(2)),
                            maxFrameBytes));
                } else if (open.matches() && Files.size(f) > 0) { // Ratis deletes empty open segments itself
                    scans.add(SegmentScan.read(f, Long.parseLong(open.group(1)), null, maxFrameBytes));
                }
            }
        }
        scans.sort(Comparator.comparingLong(SegmentScan::start).thenComparing(SegmentScan::open));
        return scans;
    }

    private CorruptRaftLogException corrupt(Path file, String what) {
        return refusal(file, what, dataDir, null);
    }

    /**
     * The refusal of a damaged log: one sentence naming {@code file} and {@code what} is wrong, then the
     * repair, an operator's: wipe the node's data directory {@code dataDir} and start it again.
     */
    public static CorruptRaftLogException refusal(Path file, String what, Path dataDir, Throwable cause) {
        return new CorruptRaftLogException("the Raft log is corrupt: " + file + ": " + what + ". The node does not "
                + "start on a damaged log. To repair it, delete its data directory " + dataDir + " (or move it "
                + "aside) and start it again: it copies the log, or a checkpoint, from the leader. Repair one node "
                + "at a time, while the others have a leader", cause);
    }
}
