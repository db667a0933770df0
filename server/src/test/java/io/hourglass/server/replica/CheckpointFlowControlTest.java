package io.hourglass.server.replica;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.hourglass.api.v1.BrokerGrpc;
import io.hourglass.api.v1.PublishMessage;
import io.hourglass.api.v1.PublishRequest;
import io.hourglass.server.internal.v1.CheckpointChunk;
import io.hourglass.server.internal.v1.CheckpointRequest;
import io.hourglass.server.internal.v1.ReplicaGrpc;
import io.hourglass.server.testing.StreamRecorder;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checkpoint download respects flow control: a follower that does not read costs the serving node
 * a chunk or two, not the checkpoint (20 unread downloads used to add ~280 MB of RSS), and downloads
 * beyond {@code replica.maxConcurrentDownloads} are refused until one ends.
 */
@Timeout(180)
class CheckpointFlowControlTest {
    private static final int MIB = 1 << 20;
    private static final int CHECKPOINT_MIB = 24;
    private static final int STALLED = 3;
    @TempDir
    static Path dir;
    private static TestNode node;
    private static ManagedChannel replica;

    @BeforeAll
    static void start() {
        node = TestNode.start(dir, Map.of("replica.maxConcurrentDownloads", Integer.toString(STALLED)));
        ManagedChannel client = ManagedChannelBuilder.forTarget(node.target()).usePlaintext().build();
        Random random = new Random(7);
        for (int i = 0; i < CHECKPOINT_MIB; i++) {
            byte[] payload = new byte[MIB - 1024]; // incompressible, so the checkpoint is as large
            random.nextBytes(payload);
            BrokerGrpc.newBlockingStub(client).withDeadlineAfter(60, TimeUnit.SECONDS).publish(PublishRequest.newBuilder()
                    .addMessages(PublishMessage.newBuilder().setTopic("bulk").setPayload(ByteString.copyFrom(payload)))
                    .build());
        }
        client.shutdownNow();
        replica = ManagedChannelBuilder.forTarget("127.0.0.1:" + node.node().replicaPort()).usePlaintext()
                .maxInboundMessageSize(2 * MIB).build();
    }

    @AfterAll
    static void stop() throws InterruptedException {
        replica.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        node.close();
    }

    /** A download whose reader asks for nothing: gRPC stops the sender once the transport window is full. */
    private static ClientCallStreamObserver<?> stalledDownload() {
        ClientCallStreamObserver<?>[] call = new ClientCallStreamObserver<?>[1];
        ReplicaGrpc.newStub(replica).fetchCheckpoint(CheckpointRequest.newBuilder().setRequester("stalled").build(),
                new ClientResponseObserver<CheckpointRequest, CheckpointChunk>() {
                    @Override
                    public void beforeStart(ClientCallStreamObserver<CheckpointRequest> c) {
                        c.disableAutoRequestWithInitial(0);
                        call[0] = c;
                    }

                    @Override
                    public void onNext(CheckpointChunk chunk) {
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        return call[0];
    }

    @Test
    void unreadDownloadsHoldAChunkOrTwoEachAndTheCapRefusesMore() {
        CheckpointService service = node.node().checkpoints();
        long before = service.chunksSent();
        List<ClientCallStreamObserver<?>> stalled = new ArrayList<>();
        for (int i = 0; i < STALLED; i++) {
            stalled.add(stalledDownload());
        }
        await("the stalled downloads started").atMost(Duration.ofSeconds(30)).until(() -> service.chunksSent() > before);
        // Each transfer stops once isReady() turns false; what it sent meanwhile must stay put.
        long[] settled = {0};
        await().atMost(Duration.ofSeconds(30)).pollDelay(Duration.ofMillis(500)).until(() -> {
            long now = service.chunksSent();
            boolean still = now == settled[0];
            settled[0] = now;
            return still;
        });
        long sentBytes = (settled[0] - before) * CheckpointService.CHUNK;
        System.out.printf("%d unread downloads of a %d MiB checkpoint: %d KiB handed to gRPC in all%n", STALLED,
                CHECKPOINT_MIB, sentBytes >> 10);
        // The transport window (about 1 MiB with gRPC's defaults) and a chunk or two, whatever the checkpoint's size.
        assertTrue(sentBytes <= STALLED * 3L * MIB, sentBytes + " bytes sent to readers that read nothing");

        StreamRecorder<CheckpointChunk> refused = new StreamRecorder<>();
        ReplicaGrpc.newStub(replica).fetchCheckpoint(CheckpointRequest.newBuilder().setRequester("extra").build(), refused);
        Status s = Status.fromThrowable(refused.awaitError());
        assertEquals(Status.Code.UNAVAILABLE, s.getCode(), s.toString());
        assertTrue(s.getDescription().contains("replica.maxConcurrentDownloads"), s.getDescription());

        stalled.forEach(c -> c.cancel("test done", null));
        AtomicLong bytes = new AtomicLong();
        await("a reading download completes once the stalled ones are gone").atMost(Duration.ofSeconds(60))
                .untilAsserted(() -> {
                    StreamRecorder<CheckpointChunk> full = new StreamRecorder<>();
                    ReplicaGrpc.newStub(replica).fetchCheckpoint(
                            CheckpointRequest.newBuilder().setRequester("reader").build(), full);
                    await().atMost(Duration.ofSeconds(30)).until(full::ended);
                    assertTrue(full.completed(), "completed: " + full.error());
                    bytes.set(full.values().stream().mapToLong(c -> c.getData().size()).sum());
                });
        assertTrue(bytes.get() >= (CHECKPOINT_MIB - 2L) * MIB, bytes + " bytes");
    }
}
