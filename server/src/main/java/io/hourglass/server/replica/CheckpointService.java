package io.hourglass.server.replica;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.hourglass.core.storage.EventStore;
import io.hourglass.server.internal.v1.CheckpointChunk;
import io.hourglass.server.internal.v1.CheckpointRequest;
import io.hourglass.server.internal.v1.ReplicaGrpc;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a consistent checkpoint of this node's store to a follower that must install it, on the
 * node-to-node replica port only (never the client port). The checkpoint (hard links, so cheap) is
 * made in {@code <dataDir>/checkpoints/} and removed once sent, failed or cancelled.
 *
 * <p>Flow control: a chunk is read from disk and sent only while the call {@code isReady()}; the
 * rest waits for the on-ready handler. A follower that does not read therefore holds at most the
 * transport's window, not the whole checkpoint in this node's memory (20 unread downloads used to
 * add ~280 MB of RSS). At most {@code replica.maxConcurrentDownloads} run at once; another is
 * refused with UNAVAILABLE and the follower retries.
 *
 * <p>Threads: each download runs on the replica server's executor; gRPC serialises a call's handler
 * invocations, and {@link Transfer} guards its own state by its monitor anyway.
 */
public final class CheckpointService extends ReplicaGrpc.ReplicaImplBase {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointService.class);
    /** Chunk size: small enough that what a stalled reader pins (the transport window and a chunk or two) stays around 1-2 MiB. */
    static final int CHUNK = 256 << 10;

    private final EventStore store;
    private final Path workDir;
    private final Semaphore downloads;
    private final int maxDownloads;
    private final LongAdder chunksSent = new LongAdder();

    public CheckpointService(EventStore store, Path workDir, int maxConcurrentDownloads) {
        this.store = store;
        this.workDir = workDir;
        this.maxDownloads = maxConcurrentDownloads;
        this.downloads = new Semaphore(maxConcurrentDownloads);
    }

    /** Chunks handed to gRPC since start, over all downloads (tests: what a stalled reader costs). */
    public long chunksSent() {
        return chunksSent.sum();
    }

    @Override
    public void fetchCheckpoint(CheckpointRequest request, StreamObserver<CheckpointChunk> out) {
        if (!downloads.tryAcquire()) {
            out.onError(Status.UNAVAILABLE.withDescription("this node already serves " + maxDownloads
                    + " checkpoint downloads (replica.maxConcurrentDownloads); try again later").asRuntimeException());
            return;
        }
        Path dir = workDir.resolve("serve-" + UUID.randomUUID());
        List<Path> files;
        try {
            Files.createDirectories(workDir);
            store.checkpoint(dir);
            try (Stream<Path> s = Files.list(dir)) {
                files = s.filter(Files::isRegularFile).sorted().toList();
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("checkpoint for {} failed: {}", request.getRequester(), e.toString());
            deleteQuietly(dir);
            downloads.release();
            out.onError(Status.UNAVAILABLE.withDescription("checkpoint failed: " + e.getMessage()).asRuntimeException());
            return;
        }
        new Transfer((ServerCallStreamObserver<CheckpointChunk>) out, request.getRequester(), dir, files).start();
    }

    /** One download: the files left to send, the one being read, and whether it ended. */
    private final class Transfer {
        private final ServerCallStreamObserver<CheckpointChunk> call;
        private final String requester;
        private final Path dir;
        private final Deque<Path> files;
        private final byte[] buf = new byte[CHUNK];
        private InputStream current;
        private String currentName;
        private boolean sentAnyOfCurrent;
        private long bytes;
        private boolean ended;

        Transfer(ServerCallStreamObserver<CheckpointChunk> call, String requester, Path dir, List<Path> files) {
            this.call = call;
            this.requester = requester;
            this.dir = dir;
            this.files = new ArrayDeque<>(files);
        }

        void start() {
            call.setOnCancelHandler(() -> end(null, "cancelled by " + requester));
            call.setOnReadyHandler(this::pump);
            pump();
        }

        /** Sends chunks while the transport can take them; the on-ready handler calls it again. */
        private synchronized void pump() {
            try {
                while (!ended && call.isReady()) {
                    CheckpointChunk chunk = nextChunk();
                    if (chunk == null) {
                        call.onCompleted();
                        end(null, null);
                        LOG.info("sent a checkpoint ({} bytes) to {}", bytes, requester);
                        return;
                    }
                    call.onNext(chunk);
                    chunksSent.increment();
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("checkpoint for {} failed: {}", requester, e.toString());
                end(Status.UNAVAILABLE.withDescription("checkpoint failed: " + e.getMessage()), null);
            }
        }

        /** The next chunk to send, or null when every file was sent. */
        private CheckpointChunk nextChunk() throws IOException {
            while (true) {
                if (current == null) {
                    Path f = files.poll();
                    if (f == null) {
                        return null;
                    }
                    current = Files.newInputStream(f);
                    currentName = f.getFileName().toString();
                    sentAnyOfCurrent = false;
                }
                int n = current.readNBytes(buf, 0, CHUNK);
                boolean last = n < CHUNK;
                if (last) {
                    current.close();
                    current = null;
                }
                if (n > 0 || !sentAnyOfCurrent || last) {
                    boolean empty = n == 0 && sentAnyOfCurrent; // a file whose size is a multiple of CHUNK ends here
                    sentAnyOfCurrent = true;
                    bytes += n;
                    return CheckpointChunk.newBuilder().setFile(currentName)
                            .setData(empty ? ByteString.EMPTY : ByteString.copyFrom(buf, 0, n))
                            .setLastOfFile(last).build();
                }
            }
        }

        private synchronized void end(Status error, String why) {
            if (ended) {
                return;
            }
            ended = true;
            if (current != null) {
                try {
                    current.close();
                } catch (IOException ignored) {
                    // the checkpoint is deleted next
                }
                current = null;
            }
            deleteQuietly(dir);
            downloads.release();
            if (error != null) {
                call.onError(error.asRuntimeException());
            }
            if (why != null) {
                LOG.info("checkpoint download {} after {} bytes", why, bytes);
            }
        }
    }

    public static void deleteQuietly(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOG.warn("cannot delete {}: {}", dir, e.toString());
        }
    }
}
