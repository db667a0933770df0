package io.hourglass.raft;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.hourglass.core.command.StateApplier;
import io.hourglass.core.config.Settings;
import io.hourglass.core.proto.CheckpointChunk;
import io.hourglass.core.proto.CheckpointRequest;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventStore;
import io.hourglass.testing.TestPorts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.ratis.thirdparty.io.grpc.CallOptions;
import org.apache.ratis.thirdparty.io.grpc.ClientCall;
import org.apache.ratis.thirdparty.io.grpc.ManagedChannel;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.Status;
import org.apache.ratis.thirdparty.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checkpoint download is served on the Raft port and respects flow control: a follower that
 * does not read costs the serving node a transport window, not the checkpoint (20 unread
 * downloads used to add ~280 MB of RSS); downloads beyond {@code raft.maxCheckpointDownloads} are
 * refused; a reading download, through the follower's own {@link CheckpointClient}, gets every
 * file of the store.
 */
@Timeout(180)
final class CheckpointServerTest {
    private static final int MIB = 1 << 20;
    private static final int CHECKPOINT_MIB = 24;
    private static final int STALLED = 3;

    @TempDir
    Path dir;
    private EventStore store;
    private RaftNode node;
    private ManagedChannel channel;
    private int raftPort;
    private final List<ClientCall<CheckpointRequest, CheckpointChunk>> calls = new ArrayList<>();

    @BeforeEach
    void start() throws IOException {
        raftPort = TestPorts.next();
        store = EventStore.open(dir.resolve("db"));
        RaftConfig config = RaftConfig.from(new Settings(Map.of("raft.port", Integer.toString(raftPort),
                "raft.maxCheckpointDownloads", Integer.toString(STALLED))), dir, 7070);
        node = new RaftNode(config, "127.0.0.1", 7070, new StateApplier(store), Clock.systemUTC(), 2 * MIB, ProposalObserver.NONE);
        node.start();
        await().atMost(Duration.ofSeconds(30)).until(node::isLeader);
        Random random = new Random(7);
        for (int i = 0; i < CHECKPOINT_MIB; i++) {
            byte[] payload = new byte[MIB - 1024]; // incompressible, so the checkpoint is as large
            random.nextBytes(payload);
            node.propose(Command.newBuilder().setPut(PutCmd.newBuilder().addMessages(NewMessage.newBuilder()
                    .setTopic("bulk").setPayload(ByteString.copyFrom(payload)))).build()).join();
        }
        store.flush();
        // A fixed 1 MiB receive window: with grpc-java's automatic window (BDP probing) a reader's
        // window may grow while the first chunks arrive, and what a stalled reader holds with it.
        channel = NettyChannelBuilder.forTarget("127.0.0.1:" + raftPort).usePlaintext()
                .maxInboundMessageSize(2 * MIB).flowControlWindow(MIB).build();
    }

    @AfterEach
    void stop() throws Exception {
        calls.forEach(c -> c.cancel("test done", null));
        if (channel != null) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (node != null) {
            node.close();
        }
        if (store != null) {
            store.close();
        }
    }

    /**
     * A download whose reader takes {@code initialRequests} chunks and then nothing more: gRPC stops
     * the sender once the transport window is full.
     */
    private CompletableFuture<Status> download(String requester, int initialRequests) {
        CompletableFuture<Status> closed = new CompletableFuture<>();
        ClientCall<CheckpointRequest, CheckpointChunk> call = channel.newCall(CheckpointServer.FETCH, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onClose(Status status, Metadata trailers) {
                closed.complete(status);
            }
        }, new Metadata());
        call.sendMessage(CheckpointRequest.newBuilder().setRequester(requester).build());
        call.halfClose();
        call.request(initialRequests);
        calls.add(call);
        return closed;
    }

    @Test
    void unreadDownloadsHoldATransportWindowEachTheCapRefusesMoreAndAReaderGetsEverything() throws Exception {
        long before = node.counters().checkpointChunksSent();
        for (int i = 0; i < STALLED; i++) {
            download("stalled-" + i, 1);
        }
        await("the stalled downloads started").atMost(Duration.ofSeconds(30))
                .until(() -> node.counters().checkpointChunksSent() > before);
        long[] settled = {-1};
        await("the senders stopped").atMost(Duration.ofSeconds(30)).pollDelay(Duration.ofMillis(500)).until(() -> {
            long now = node.counters().checkpointChunksSent();
            boolean still = now == settled[0];
            settled[0] = now;
            return still;
        });
        long sentBytes = (settled[0] - before) * CheckpointServer.CHUNK;
        // The transport window (Ratis' gRPC flow-control window, 1 MiB by default) and a few chunks
        // in buffers: about 2.3 MiB per download measured, whatever the checkpoint's size.
        System.out.printf("%d unread downloads of a %d MiB checkpoint: %d KiB handed to gRPC in all%n", STALLED,
                CHECKPOINT_MIB, sentBytes >> 10);
        assertTrue(sentBytes <= STALLED * 3L * MIB, sentBytes + " bytes sent to readers that read nothing");

        Status refused = download("extra", 1).get(30, TimeUnit.SECONDS);
        assertEquals(Status.Code.UNAVAILABLE, refused.getCode(), refused.toString());
        assertTrue(refused.getDescription().contains("raft.maxCheckpointDownloads"), refused.getDescription());

        calls.forEach(c -> c.cancel("stalled readers leave", null));
        calls.clear();
        Path installs = dir.resolve("follower");
        Path got = await("a reading download completes once the stalled ones are gone").atMost(Duration.ofSeconds(60))
                .until(() -> new CheckpointClient("follower", installs, id -> "127.0.0.1:" + raftPort, null)
                        .fetchFrom("n1").handle((p, e) -> p).get(30, TimeUnit.SECONDS), p -> p != null);
        long bytes;
        try (Stream<Path> files = Files.list(got)) {
            bytes = files.mapToLong(p -> p.toFile().length()).sum();
        }
        assertTrue(bytes >= (CHECKPOINT_MIB - 2L) * MIB, bytes + " bytes downloaded");
        assertEquals(store.appliedIndex(), EventStore.appliedIndexOf(got), "the download is a usable store");
    }
}
