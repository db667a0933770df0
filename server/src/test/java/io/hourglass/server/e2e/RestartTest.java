package io.hourglass.server.e2e;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.Subscription;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node restarted with acknowledged and unacknowledged messages redelivers the latter and never
 * the former. (The same with kill -9 of a real process: chaos-tests' ProcessRestartTest.)
 */
@Timeout(180)
class RestartTest {
    @TempDir
    Path dir;

    @Test
    void restartRedeliversUnackedAndNeverAcked() {
        try (TestNode node = TestNode.start(dir);
             HourglassClient client = HourglassClient.builder().servers(node.target()).build()) {
            client.publishBatch(IntStream.range(0, 10).mapToObj(i -> Message.of("restart", "m" + i)).toList());
            Set<String> confirmed = ConcurrentHashMap.newKeySet();
            Set<String> held = ConcurrentHashMap.newKeySet();
            Subscription first = client.subscribe("restart", "g", (m, ctx) -> {
                int n = Integer.parseInt(m.payloadUtf8().substring(1));
                if (n % 2 == 0) {
                    ctx.ackConfirmed().thenRun(() -> confirmed.add(m.payloadUtf8()));
                } else {
                    held.add(m.payloadUtf8()); // received, never acknowledged
                }
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> confirmed.size() == 5 && held.size() == 5);
            first.close();

            node.restart();

            Set<String> after = ConcurrentHashMap.newKeySet();
            Recorder r = Recorder.acking();
            try (Subscription second = client.subscribe("restart", "g", r)) {
                await().atMost(Duration.ofSeconds(60)).until(() -> r.count() >= 5);
                after.addAll(r.payloads());
                // Give a wrongly resurrected message every chance to show up: a dispatcher pass
                // after a fresh publish has certainly scanned the whole topic.
                client.publish(Message.of("restart", "marker"));
                await().atMost(Duration.ofSeconds(30)).until(() -> r.payloads().contains("marker"));
                assertEquals(6, r.count(), "only the five unacknowledged messages and the marker: " + r.payloads());
            }
            Set<String> expected = new HashSet<>(held);
            assertEquals(expected, after.stream().filter(p -> !p.equals("marker")).collect(Collectors.toSet()));
        }
    }
}
