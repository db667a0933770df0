package io.hourglass.chaos;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.ShardHash;
import io.hourglass.client.Subscription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Three node processes with six event shards ({@code HOURGLASS_CLUSTER_SHARDS=6}): once the
 * leaderships are spread (two per node), {@code kill -9} of a node that leads several shards. Every
 * one of its shards elects a leader among the others (the time until all have is printed as
 * {@code SHARDS_FAILOVER_MS}), and every message — those due before the kill, those due after it,
 * and those published after it — is delivered on every shard.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
final class ShardedKillTest {
    private static final int SHARDS = 6;
    private static final Pattern LEADER = Pattern.compile("(?m)^hourglass_is_leader\\{shard=\"(\\d+)\"} 1\\.0$");

    @RegisterExtension
    final ServerLogsOnFailure serverLogs = new ServerLogsOnFailure();

    private ProcessCluster cluster;
    private HourglassClient client;

    @AfterEach
    void stopEverything() {
        if (client != null) {
            client.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Shard → the running node that leads it, from each node's own gauges. */
    private Map<Integer, ServerProcess> leaders() {
        Map<Integer, ServerProcess> led = new HashMap<>();
        for (ServerProcess n : cluster.nodes()) {
            if (!n.isAlive()) {
                continue;
            }
            n.httpGet("/metrics").ifPresent(body -> {
                Matcher m = LEADER.matcher(body);
                while (m.find()) {
                    led.put(Integer.parseInt(m.group(1)), n);
                }
            });
        }
        return led;
    }

    private static List<String> oneTopicPerShard() {
        String[] topics = new String[SHARDS];
        for (int n = 0, found = 0; found < SHARDS; n++) {
            int shard = ShardHash.shardOf("orders-" + n, SHARDS);
            if (topics[shard] == null) {
                topics[shard] = "orders-" + n;
                found++;
            }
        }
        return List.of(topics);
    }

    private Set<String> publish(List<String> topics, int perTopic, Duration delay, String tag) {
        List<Message> batch = new ArrayList<>();
        for (String topic : topics) {
            for (int i = 0; i < perTopic; i++) {
                batch.add(Message.builder(topic).payload(tag + "-" + i).delay(delay).build());
            }
        }
        return client.publishBatch(batch).stream().map(PublishResult::id).collect(Collectors.toSet());
    }

    @Test
    void killingANodeThatLeadsSeveralShardsMakesEachElectAndLosesNothing() {
        Distribution distribution = Distribution.locate();
        cluster = ProcessCluster.create(distribution, distribution.newRunDir(getClass().getSimpleName()), 3,
                Map.of("HOURGLASS_CLUSTER_SHARDS", Integer.toString(SHARDS)));
        serverLogs.watch(cluster.nodes());
        cluster.startAll(Duration.ofSeconds(120));
        await("every shard led, two per node").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    Map<Integer, ServerProcess> led = leaders();
                    return led.size() == SHARDS && led.values().stream()
                            .collect(Collectors.groupingBy(ServerProcess::nodeId, Collectors.counting()))
                            .values().stream().allMatch(c -> c == 2);
                });

        client = HourglassClient.builder().servers(cluster.clientAddresses()).build();
        List<String> topics = oneTopicPerShard();
        Set<String> received = ConcurrentHashMap.newKeySet();
        List<Subscription> subs = new ArrayList<>();
        for (String topic : topics) {
            subs.add(client.subscribe(topic, "g", (m, ctx) -> {
                received.add(m.id());
                ctx.ack();
            }));
        }
        await("subscribed on every shard").atMost(Duration.ofSeconds(60))
                .until(() -> subs.stream().allMatch(Subscription::isSubscribed));
        Set<String> now = publish(topics, 50, Duration.ZERO, "now");
        await("the first messages delivered").atMost(Duration.ofSeconds(60)).until(() -> received.containsAll(now));
        Set<String> later = publish(topics, 50, Duration.ofSeconds(3), "later");

        Map<Integer, ServerProcess> before = leaders();
        ServerProcess victim = before.values().iterator().next();
        List<Integer> victimShards = before.entrySet().stream().filter(e -> e.getValue() == victim)
                .map(Map.Entry::getKey).toList();
        assertTrue(victimShards.size() >= 2, "the victim leads several shards: " + victimShards);
        long killed = System.nanoTime();
        victim.kill();

        await("every shard of " + victim.nodeId() + " elected another leader").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(50)).until(() -> {
                    Map<Integer, ServerProcess> led = leaders();
                    return victimShards.stream().allMatch(s -> led.get(s) != null && led.get(s) != victim);
                });
        System.out.println("SHARDS_FAILOVER_MS " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed)
                + " (" + victimShards.size() + " shards of " + victim.nodeId() + ")");

        await("every message due after the kill delivered").atMost(Duration.ofSeconds(90))
                .until(() -> received.containsAll(later));
        Set<String> after = publish(topics, 50, Duration.ZERO, "after");
        await("every message published after the kill delivered").atMost(Duration.ofSeconds(60))
                .until(() -> received.containsAll(after));
        subs.forEach(Subscription::close);
    }
}
