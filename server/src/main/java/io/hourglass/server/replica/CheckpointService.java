package io.hourglass.server.replica;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.hourglass.core.storage.EventStore;
import io.hourglass.server.internal.v1.CheckpointChunk;
import io.hourglass.server.internal.v1.CheckpointRequest;
import io.hourglass.server.internal.v1.ReplicaGrpc;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves a consistent checkpoint of this node's store to a follower that must install it.
 * The checkpoint (hard links, so cheap) is made in {@code <dataDir>/checkpoints/} and removed
 * once sent. Runs on the gRPC executor; one checkpoint per request.
 */
public final class CheckpointService extends ReplicaGrpc.ReplicaImplBase {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointService.class);
    static final int CHUNK = 1 << 20;

    private final EventStore store;
    private final Path workDir;

    public CheckpointService(EventStore store, Path workDir) {
        this.store = store;
        this.workDir = workDir;
    }

    @Override
    public void fetchCheckpoint(CheckpointRequest request, StreamObserver<CheckpointChunk> out) {
        Path dir = workDir.resolve("serve-" + UUID.randomUUID());
        try {
            Files.createDirectories(workDir);
            store.checkpoint(dir);
            List<Path> files;
            try (Stream<Path> s = Files.list(dir)) {
                files = s.filter(Files::isRegularFile).sorted().toList();
            }
            long bytes = 0;
            for (Path f : files) {
                bytes += send(f, out);
            }
            out.onCompleted();
            LOG.info("sent a checkpoint of {} files ({} bytes) to {}", files.size(), bytes, request.getRequester());
        } catch (IOException | RuntimeException e) {
            LOG.warn("checkpoint for {} failed: {}", request.getRequester(), e.toString());
            out.onError(Status.UNAVAILABLE.withDescription("checkpoint failed: " + e.getMessage()).asRuntimeException());
        } finally {
            deleteQuietly(dir);
        }
    }

    private static long send(Path file, StreamObserver<CheckpointChunk> out) throws IOException {
        String name = file.getFileName().toString();
        long total = 0;
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[CHUNK];
            boolean sentAny = false;
            while (true) {
                int n = in.readNBytes(buf, 0, CHUNK);
                boolean last = n < CHUNK;
                if (n > 0 || !sentAny) {
                    out.onNext(CheckpointChunk.newBuilder().setFile(name).setData(ByteString.copyFrom(buf, 0, n))
                            .setLastOfFile(last).build());
                    sentAny = true;
                    total += n;
                }
                if (last) {
                    if (n == CHUNK) {
                        out.onNext(CheckpointChunk.newBuilder().setFile(name).setLastOfFile(true).build());
                    }
                    return total;
                }
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
