package io.hourglass.server.testing;

import static org.awaitility.Awaitility.await;

import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/** Records what a server stream sends, for raw-stub protocol tests. */
public class StreamRecorder<T> implements StreamObserver<T> {
    private final List<T> values = new CopyOnWriteArrayList<>();
    private volatile Throwable error;
    private volatile boolean completed;
    /** {@link System#nanoTime()} when the stream ended (error or completion); 0 while open. */
    private volatile long endedAtNanos;

    @Override
    public void onNext(T value) {
        values.add(value);
    }

    @Override
    public void onError(Throwable t) {
        endedAtNanos = System.nanoTime();
        error = t;
    }

    @Override
    public void onCompleted() {
        endedAtNanos = System.nanoTime();
        completed = true;
    }

    public List<T> values() {
        return new ArrayList<>(values);
    }

    public Throwable awaitError() {
        await().atMost(Duration.ofSeconds(20)).until(() -> error != null);
        return error;
    }

    public Throwable error() {
        return error;
    }

    public boolean completed() {
        return completed;
    }

    /** Whether the stream has ended, with an error or completed. */
    public boolean ended() {
        return error != null || completed;
    }

    /** {@link System#nanoTime()} when the stream ended; 0 while it is open. */
    public long endedAtNanos() {
        return endedAtNanos;
    }

    /** Waits until some recorded value matches, and returns it. */
    public T awaitValue(Predicate<T> matching) {
        await().atMost(Duration.ofSeconds(20)).until(() -> values.stream().anyMatch(matching) || error != null);
        return values.stream().filter(matching).findFirst()
                .orElseThrow(() -> new AssertionError("stream failed instead: " + error));
    }
}
