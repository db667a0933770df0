package io.hourglass.core.delivery;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
 * A dispatch pass on a real store: 64 new due messages handed to a group consumer while
 * {@code inFlight} earlier messages are out unacknowledged. The frontier keeps the pass's cost to
 * the new messages, whatever is in flight (it used to re-read and parse every one of them).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class DispatchBench {
    @Param({"0", "10000"})
    public int inFlight;
    private Path dir;
    private DeliveryFixture f;
    private DeliveryFixture.TestConsumer consumer;
    private String[] batch;

    @Setup
    public void setUp() throws IOException {
        dir = Files.createTempDirectory("dispatch-bench");
        f = new DeliveryFixture(dir, DeliveryFixture.config(1 << 20, 1024));
        consumer = f.subscribe("orders", "billing");
        for (int i = 0; i < inFlight; i += 1000) {
            String[] earlier = new String[Math.min(1000, inFlight - i)];
            java.util.Arrays.fill(earlier, "earlier");
            f.publish("orders", 0, 0, earlier);
        }
        f.engine.dispatchOnce();
        consumer.drain();
        batch = new String[64];
        java.util.Arrays.fill(batch, "x".repeat(1024));
    }

    /** Publish 64, one pass, drain them. */
    @Benchmark
    public int passOverNewMessages() {
        f.publish("orders", 0, 0, batch);
        int n = f.engine.dispatchOnce();
        List<Delivery> got = consumer.drain();
        return n + got.size();
    }

    @TearDown
    public void tearDown() throws IOException {
        f.close();
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
