package io.hourglass.core.command;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.hourglass.core.proto.Command;
import io.hourglass.core.proto.NewMessage;
import io.hourglass.core.proto.PutCmd;
import io.hourglass.core.proto.StoredMessage;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The codec of a publish entry: what the leader serialises once per entry and every replica parses
 * once on apply (one pass each; the parsed command is not re-encoded), and the stored message the
 * dispatcher parses once per hand-out. Run with {@code JmhBenchmarksTest} (core/README in the
 * benchmark section of the top-level README).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class CodecBench {
    @Param({"1", "64"})
    public int messages;
    private Command command;
    private byte[] entry;
    private byte[] stored;

    @Setup
    public void setUp() {
        byte[] payload = new byte[1024];
        PutCmd.Builder put = PutCmd.newBuilder();
        for (int i = 0; i < messages; i++) {
            put.addMessages(NewMessage.newBuilder().setTopic("orders").setPayload(ByteString.copyFrom(payload))
                    .putHeaders("trace", "abc" + i).setDelayMs(0).setProducerId("producer-" + i));
        }
        command = Command.newBuilder().setPut(put).setStampedAtMs(1_700_000_000_000L).build();
        entry = command.toByteArray();
        stored = StoredMessage.newBuilder().setTopic("orders").setPayload(ByteString.copyFrom(payload))
                .putHeaders("trace", "abc").setEnqueuedAtMs(1).setDueAtMs(2).build().toByteArray();
    }

    @Benchmark
    public byte[] serialiseEntry() {
        return command.toByteArray();
    }

    @Benchmark
    public Command parseEntry() throws InvalidProtocolBufferException {
        return Command.parseFrom(entry);
    }

    @Benchmark
    public StoredMessage parseStoredMessage() throws InvalidProtocolBufferException {
        return StoredMessage.parseFrom(stored);
    }
}
