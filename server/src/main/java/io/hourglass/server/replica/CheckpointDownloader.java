package io.hourglass.server.replica;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.hourglass.raft.CheckpointSource;
import io.hourglass.server.internal.v1.CheckpointChunk;
import io.hourglass.server.internal.v1.CheckpointRequest;
import io.hourglass.server.internal.v1.ReplicaGrpc;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Downloads the leader's checkpoint from its replica port (the node-to-node API, never the client
 * port) into {@code <dataDir>/checkpoints/install-<uuid>}. Files are written as their chunks arrive,
 * on the gRPC callback thread of this one call.
 */
public final class CheckpointDownloader implements CheckpointSource {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointDownloader.class);

    private final String selfId;
    private final Path workDir;
    private final Function<String, String> replicaAddressOfPeer;

    /** @param replicaAddressOfPeer a peer id's {@code host:replicaPort}, or null when the peer is unknown */
    public CheckpointDownloader(String selfId, Path workDir, Function<String, String> replicaAddressOfPeer) {
        this.selfId = selfId;
        this.workDir = workDir;
        this.replicaAddressOfPeer = replicaAddressOfPeer;
    }

    @Override
    public CompletableFuture<Path> fetchFrom(String leaderPeerId) {
        String address = replicaAddressOfPeer.apply(leaderPeerId);
        if (address == null) {
            return CompletableFuture.failedFuture(new IOException("no replica address known for peer " + leaderPeerId));
        }
        Path dir = workDir.resolve("install-" + UUID.randomUUID());
        CompletableFuture<Path> done = new CompletableFuture<>();
        ManagedChannel channel = ManagedChannelBuilder.forTarget(address).usePlaintext()
                .maxInboundMessageSize(CheckpointService.CHUNK + (64 << 10)).build();
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            channel.shutdownNow();
            return CompletableFuture.failedFuture(e);
        }
        ReplicaGrpc.newStub(channel).withDeadlineAfter(30, TimeUnit.MINUTES).fetchCheckpoint(
                CheckpointRequest.newBuilder().setRequester(selfId).build(), new StreamObserver<>() {
                    private OutputStream current;
                    private String currentName;
                    private long bytes;

                    @Override
                    public void onNext(CheckpointChunk chunk) {
                        try {
                            if (!chunk.getFile().equals(currentName)) {
                                closeCurrent();
                                currentName = chunk.getFile();
                                Path target = dir.resolve(currentName).normalize();
                                if (!target.getParent().equals(dir)) {
                                    throw new IOException("refusing file name " + currentName);
                                }
                                current = Files.newOutputStream(target, StandardOpenOption.CREATE_NEW);
                            }
                            chunk.getData().writeTo(current);
                            bytes += chunk.getData().size();
                            if (chunk.getLastOfFile()) {
                                closeCurrent();
                            }
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }

                    private void closeCurrent() throws IOException {
                        if (current != null) {
                            current.close();
                            current = null;
                            currentName = null;
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        try {
                            closeCurrent();
                        } catch (IOException ignored) {
                            // the download failed anyway
                        }
                        CheckpointService.deleteQuietly(dir);
                        channel.shutdownNow();
                        LOG.warn("checkpoint download from {} ({}) failed: {}", leaderPeerId, address, t.toString());
                        done.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        try {
                            closeCurrent();
                        } catch (IOException e) {
                            onError(e);
                            return;
                        }
                        channel.shutdown();
                        LOG.info("downloaded a checkpoint of {} bytes from {}", bytes, leaderPeerId);
                        done.complete(dir);
                    }
                });
        return done;
    }
}
