package io.hourglass.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The measurement runs: switched on with {@code -Dhourglass.measure=true}, otherwise skipped so
 * that the default build stays fast. Each result is one line, printed to stdout (which Surefire
 * keeps in {@code target/surefire-reports/<class>-output.txt}) and appended to
 * {@code target/chaos-runs/measurements.txt}.
 */
final class Measurements {
    static final String ENABLED_PROPERTY = "hourglass.measure";

    private Measurements() {
    }

    static boolean enabled() {
        return Boolean.getBoolean(ENABLED_PROPERTY);
    }

    static void report(Distribution distribution, String line) {
        System.out.println(line);
        Path file = distribution.runsDir().resolve("measurements.txt");
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, Instant.now() + " " + line + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /** The median of {@code samples} in milliseconds: the middle one, or the mean of the two middle ones. */
    static long medianMillis(List<Duration> samples) {
        if (samples.isEmpty()) {
            throw new IllegalArgumentException("no samples");
        }
        List<Long> ms = new ArrayList<>(samples.stream().map(Duration::toMillis).toList());
        Collections.sort(ms);
        int mid = ms.size() / 2;
        return ms.size() % 2 == 1 ? ms.get(mid) : (ms.get(mid - 1) + ms.get(mid)) / 2;
    }

    /** Messages per second for {@code count} messages in {@code elapsed}. */
    static long perSecond(int count, Duration elapsed) {
        return Math.round(count / (Math.max(1, elapsed.toNanos()) / 1e9));
    }
}
