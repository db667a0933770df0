package io.hourglass.core.command;

import com.google.protobuf.ByteString;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.DeleteBatchCmd;
import io.hourglass.core.proto.Deletion;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.storage.EventKey;
import io.hourglass.core.storage.EventStore;
import io.hourglass.core.storage.TermIndex;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The apply path on a real RocksDB: a publish entry of {@code messages} 1 KiB messages, and the
 * delete batch that acknowledges them for the topic's one durable group — what every replica does
 * per entry on its apply thread.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class ApplyBench {
    @Param({"1", "64"})
    public int messages;
    private Path dir;
    private EventStore store;
    private StateApplier applier;
    private long index;
    private long stamp = 1_700_000_000_000L;
    private PutCmd put;
    private long nextProducerId;

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("apply-bench");
        store = EventStore.open(dir.resolve("db"));
        applier = new StateApplier(store);
        apply(Command.newBuilder().setRegisterGroup(io.hourglass.core.proto.RegisterGroupCmd.newBuilder()
                .setTopic("orders").setGroup("billing")).build());
        PutCmd.Builder b = PutCmd.newBuilder();
        byte[] payload = new byte[1024];
        for (int i = 0; i < messages; i++) {
            b.addMessages(NewMessage.newBuilder().setTopic("orders").setPayload(ByteString.copyFrom(payload)));
        }
        put = b.build();
    }

    private ApplyResult apply(Command c) {
        return applier.apply(c.toBuilder().setStampedAtMs(++stamp).build(), new TermIndex(1, ++index));
    }

    /** One publish entry and the delete batch that acknowledges all of it. */
    @Benchmark
    public int publishThenAcknowledge() {
        ApplyResult published = apply(Command.newBuilder().setPut(put).build());
        DeleteBatchCmd.Builder deletes = DeleteBatchCmd.newBuilder();
        for (EventKey k : published.published()) {
            deletes.addDeletions(Deletion.newBuilder().setEventKey(ByteString.copyFrom(k.toBytes())).setGroup("billing"));
        }
        return apply(Command.newBuilder().setDeleteBatch(deletes).build()).deleted().size();
    }

    /**
     * One publish entry whose messages carry producer ids, as every client's do (ordered ones, as the
     * Java client draws them): the deduplication lookup and the two index writes per message included.
     */
    @Benchmark
    public int publishWithProducerIds() {
        PutCmd.Builder b = put.toBuilder();
        for (int i = 0; i < messages; i++) {
            b.setMessages(i, b.getMessages(i).toBuilder().setProducerId(String.format("bench-%016x", nextProducerId++)));
        }
        return apply(Command.newBuilder().setPut(b).build()).published().size();
    }

    @TearDown
    public void tearDown() throws IOException {
        store.close();
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
