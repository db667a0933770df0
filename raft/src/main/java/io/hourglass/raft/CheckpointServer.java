package io.hourglass.raft;

import io.hourglass.core.proto.CheckpointChunk;
import io.hourglass.core.proto.CheckpointRequest;
import io.hourglass.core.storage.EventStore;
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
import org.apache.ratis.thirdparty.io.grpc.MethodDescriptor;
import org.apache.ratis.thirdparty.io.grpc.ServerServiceDefinition;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCallStreamObserver;
import org.apache.ratis.thirdparty.io.grpc.stub.ServerCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a consistent checkpoint of this node's store to a follower that must install one. It is
 * a service of this node's Raft gRPC server (added through Ratis' services customizer), so it is
 * reachable exactly where Raft is — between nodes, with the Raft port's transport security — and
 * never on the client port. The checkpoint (hard links, so cheap) is made under
 * {@code checkpointDir} and removed once sent, failed or cancelled.
 *
 * <p>Flow control: a chunk is read from disk and sent only while the call {@code isReady()}; the
 * rest waits for the on-ready handler. A follower that does not read holds at most the transport's
 * window, not the checkpoint, in this node's memory (20 unread downloads used to add ~280 MB of
 * RSS). At most {@code maxConcurrent} downloads run at once; another is refused with UNAVAILABLE and
 * the follower retries.
 *
 * <p>Threads: a download runs on Ratis' gRPC executor; gRPC serialises one call's callbacks, and
 * each {@link Transfer} guards its state by its own monitor anyway.
 */
final class CheckpointServer {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointServer.class);
    static final String SERVICE = "hourglass.replica.Replica";
    /** Small chunks: a reader that stalls pins only a few of them in the transport's buffers. */
    static final int CHUNK = 256 << 10;
    static final MethodDescriptor<CheckpointRequest, CheckpointChunk> FETCH =
            MethodDescriptor.<CheckpointRequest, CheckpointChunk>newBuilder()
                    .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
                    .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "FetchCheckpoint"))
                    .setRequestMarshaller(new ProtoMarshaller<>(CheckpointRequest.parser()))
                    .setResponseMarshaller(new ProtoMarshaller<>(CheckpointChunk.parser()))
                    .build();

    private final String nodeId;
    private final EventStore store;
    private final Path workDir;
    private final int maxConcurrent;
    private final Semaphore downloads;
    private final LongAdder chunksSent = new LongAdder();

    CheckpointServer(String nodeId, EventStore store, Path workDir, int maxConcurrent) {
        this.nodeId = nodeId;
        this.store = store;
        this.workDir = workDir;
        this.maxConcurrent = maxConcurrent;
        this.downloads = new Semaphore(maxConcurrent);
    }

    /** The checkpoint service of this node, serving each shard's store from that shard's server. */
    static ServerServiceDefinition definition(java.util.function.IntFunction<CheckpointServer> byShard) {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(FETCH, ServerCalls.asyncServerStreamingCall((CheckpointRequest request,
                                                                        StreamObserver<CheckpointChunk> out) -> {
                    CheckpointServer server = byShard.apply(request.getShard());
                    if (server == null) {
                        out.onError(Status.NOT_FOUND.withDescription("no shard " + request.getShard() + " on this node")
                                .asRuntimeException());
                    } else {
                        server.fetch(request, out);
                    }
                }))
                .build();
    }

    /** A service of this server alone (tests). */
    ServerServiceDefinition definition() {
        return definition(shard -> shard == 0 ? this : null);
    }

    /** Chunks handed to gRPC since start, over all downloads (tests: what a stalled reader costs). */
    long chunksSent() {
        return chunksSent.sum();
    }

    private void fetch(CheckpointRequest request, StreamObserver<CheckpointChunk> out) {
        String requester = request.getRequester();
        if (!downloads.tryAcquire()) {
            out.onError(Status.UNAVAILABLE.withDescription(nodeId + " already serves " + maxConcurrent
                    + " checkpoint downloads (raft.maxCheckpointDownloads); try again later").asRuntimeException());
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
            LOG.warn("{}: checkpoint for {} failed: {}", nodeId, requester, e.toString());
            deleteQuietly(dir);
            downloads.release();
            out.onError(Status.UNAVAILABLE.withDescription("checkpoint failed: " + e.getMessage()).asRuntimeException());
            return;
        }
        new Transfer((ServerCallStreamObserver<CheckpointChunk>) out, requester, dir, files).start();
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
                        LOG.info("{}: sent a checkpoint ({} bytes) to {}", nodeId, bytes, requester);
                        return;
                    }
                    call.onNext(chunk);
                    chunksSent.increment();
                }
            } catch (IOException | RuntimeException e) {
                LOG.warn("{}: checkpoint for {} failed: {}", nodeId, requester, e.toString());
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
                    sentAnyOfCurrent = true;
                    bytes += n;
                    return CheckpointChunk.newBuilder().setFile(currentName)
                            .setData(com.google.protobuf.ByteString.copyFrom(buf, 0, n))
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
                LOG.info("{}: checkpoint download {} after {} bytes", nodeId, why, bytes);
            }
        }
    }

    static void deleteQuietly(Path dir) {
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
