package io.hourglass.raft;

import io.hourglass.core.proto.CheckpointChunk;
import io.hourglass.core.proto.CheckpointRequest;
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
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.Context;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.apache.ratis.thirdparty.io.grpc.stub.ClientCalls;
import org.apache.ratis.thirdparty.io.grpc.stub.StreamObserver;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Downloads the leader's checkpoint from the {@link CheckpointServer} on its Raft port into
 * {@code <checkpointDir>/install-<uuid>}. Files are written as their chunks arrive, on the gRPC
 * callback thread of this one call.
 */
final class CheckpointClient implements CheckpointSource {
    private static final Logger LOG = LoggerFactory.getLogger(CheckpointClient.class);
    private static final long DOWNLOAD_DEADLINE_MINUTES = 30;

    private final String selfId;
    private final Path workDir;
    private final int shard;
    private final Function<String, String> raftAddressOfPeer;
    /** The peer mTLS context, or null for plain text. */
    private final SslContext tls;

    /** @param raftAddressOfPeer a peer id's Raft {@code host:port}, or null when the peer is unknown */
    /** @param tls the peer mTLS client context (this node's certificate, the peer CA), or null for plain text */
    CheckpointClient(String selfId, Path workDir, Function<String, String> raftAddressOfPeer, SslContext tls) {
        this(selfId, 0, workDir, raftAddressOfPeer, tls);
    }

    /** @param shard the event shard whose store is fetched */
    CheckpointClient(String selfId, int shard, Path workDir, Function<String, String> raftAddressOfPeer, SslContext tls) {
        this.shard = shard;
        this.tls = tls;
        this.selfId = selfId;
        this.workDir = workDir;
        this.raftAddressOfPeer = raftAddressOfPeer;
    }

    @Override
    public CompletableFuture<Path> fetchFrom(String leaderPeerId) {
        String address = raftAddressOfPeer.apply(leaderPeerId);
        if (address == null) {
            return CompletableFuture.failedFuture(new IOException("no Raft address known for peer " + leaderPeerId));
        }
        Path dir = workDir.resolve("install-" + UUID.randomUUID());
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Path> done = new CompletableFuture<>();
        NettyChannelBuilder builder = NettyChannelBuilder.forTarget(address)
                .maxInboundMessageSize(CheckpointServer.CHUNK + (64 << 10));
        ManagedChannel channel = (tls == null ? builder.usePlaintext() : builder.sslContext(tls)).build();
        // Ratis asks for the install while it handles the leader's InstallSnapshot RPC, on that
        // call's gRPC context (the same shaded gRPC as ours): a call started in it would be
        // cancelled as soon as that RPC is answered. The download runs in a context of its own.
        Context.ROOT.run(() -> ClientCalls.asyncServerStreamingCall(
                channel.newCall(CheckpointServer.FETCH, CallOptions.DEFAULT
                        .withDeadlineAfter(DOWNLOAD_DEADLINE_MINUTES, TimeUnit.MINUTES)),
                CheckpointRequest.newBuilder().setRequester(selfId).setShard(shard).build(),
                new Writer(leaderPeerId, address, dir, channel, done)));
        return done;
    }

    /** Writes one download's files; owned by the call's callback thread. */
    private static final class Writer implements StreamObserver<CheckpointChunk> {
        private final String leader;
        private final String address;
        private final Path dir;
        private final ManagedChannel channel;
        private final CompletableFuture<Path> done;
        private OutputStream current;
        private String currentName;
        private long bytes;

        Writer(String leader, String address, Path dir, ManagedChannel channel, CompletableFuture<Path> done) {
            this.leader = leader;
            this.address = address;
            this.dir = dir;
            this.channel = channel;
            this.done = done;
        }

        @Override
        public void onNext(CheckpointChunk chunk) {
            try {
                if (!chunk.getFile().equals(currentName)) {
                    closeCurrent();
                    currentName = chunk.getFile();
                    Path target = dir.resolve(currentName).normalize();
                    if (!dir.equals(target.getParent())) {
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
            CheckpointServer.deleteQuietly(dir);
            channel.shutdownNow();
            LOG.warn("checkpoint download from {} ({}) failed: {}", leader, address, t.toString());
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
            LOG.info("downloaded a checkpoint of {} bytes from {}", bytes, leader);
            done.complete(dir);
        }
    }
}
