package io.hourglass.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.client.HourglassClient;
import io.hourglass.client.Message;
import io.hourglass.client.PublishResult;
import io.hourglass.client.ShardHash;
import io.hourglass.client.Subscription;
import io.hourglass.raft.RaftNode;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three nodes with six event shards (cluster.shards=6), all in each node's one Raft server: topics
 * on every shard publish and consume through any node; each node leads two shards once the
 * leaderships are spread; closing a node that leads several shards (in one JVM the stand-in for
 * kill -9) makes every one of them elect and loses nothing; a wiped node catches up on every shard.
 */
@Timeout(300)
class ShardedClusterTest {
    private static final int SHARDS = 6;
    private static final String GROUP = "g";

    @TempDir
    Path dir;
    @RegisterExtension
    final ClusterResources resources = new ClusterResources();

    /** One topic name per shard: {@code topic-<n>} for the first n that hashes onto it. */
    static List<String> oneTopicPerShard() {
        return oneNamePerShard("topic-");
    }

    /** One name per shard: {@code <prefix><n>} for the first n that hashes onto it. */
    static List<String> oneNamePerShard(String prefix) {
        String[] topics = new String[SHARDS];
        for (int n = 0, found = 0; found < SHARDS; n++) {
            String name = prefix + n;
            int shard = ShardHash.shardOf(name, SHARDS);
            if (topics[shard] == null) {
                topics[shard] = name;
                found++;
            }
        }
        return List.of(topics);
    }

    static Optional<TestNode> leaderOf(TestCluster cluster, int shard) {
        return cluster.running().stream().filter(n -> n.node().raftHost().shard(shard).isLeader()).findFirst();
    }

    static void awaitEveryShardLed(TestCluster cluster) {
        await("every shard has a leader").atMost(Duration.ofSeconds(60)).until(() ->
                IntStream.range(0, SHARDS).allMatch(s -> leaderOf(cluster, s).isPresent()));
    }

    /**
     * Each of the three nodes leads two of the six shards: the leader balancer is done. Until then it
     * keeps handing leaderships over, and a test that opens streams or sends in between races it.
     */
    static void awaitBalanced(TestCluster cluster) {
        await("each node leads two of the six shards").atMost(Duration.ofSeconds(90))
                .until(() -> leadershipsPerNode(cluster).values().stream().allMatch(c -> c == 2)
                        && leadershipsPerNode(cluster).size() == 3);
    }

    static Map<String, Integer> leadershipsPerNode(TestCluster cluster) {
        Map<String, Integer> led = new HashMap<>();
        for (int s = 0; s < SHARDS; s++) {
            leaderOf(cluster, s).ifPresent(n -> led.merge(n.id(), 1, Integer::sum));
        }
        return led;
    }

    /** Publishes {@code perTopic} messages to each topic in one batch, consumes them all, and returns the ids. */
    private static Set<String> publishAndConsume(HourglassClient client, List<String> topics, int perTopic, String tag) {
        Set<String> received = ConcurrentHashMap.newKeySet();
        List<Subscription> subs = new ArrayList<>();
        for (String topic : topics) {
            subs.add(client.subscribe(topic, GROUP, (m, ctx) -> {
                received.add(m.id());
                ctx.ack();
            }));
        }
        await("the consumers are subscribed").atMost(Duration.ofSeconds(60))
                .until(() -> subs.stream().allMatch(Subscription::isSubscribed));
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < perTopic; i++) {
            for (String topic : topics) {
                batch.add(Message.builder(topic).payload(tag + "-" + topic + "-" + i).build());
            }
        }
        List<PublishResult> results = client.publishBatch(batch);
        assertEquals(batch.size(), results.size(), "one result per message");
        Set<String> ids = results.stream().map(PublishResult::id).collect(Collectors.toSet());
        assertEquals(batch.size(), ids.size(), "every message got its own id");
        await("every message is delivered").atMost(Duration.ofSeconds(60)).until(() -> received.containsAll(ids));
        subs.forEach(Subscription::close);
        return ids;
    }

    @Test
    void topicsOnEveryShardPublishAndConsumeAndTheLeadershipsAreSpread() throws Exception {
        TestCluster cluster = resources.start(dir, 3, Map.of("cluster.shards", Integer.toString(SHARDS)));
        awaitEveryShardLed(cluster);
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        List<String> topics = oneTopicPerShard();

        publishAndConsume(client, topics, 50, "first");

        // Every shard's messages live in that shard's store only, on every node (once each follower
        // has applied the groups' registrations: one may lag the leader that delivered).
        await("each topic's group on its own shard only, on every node").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            for (TestNode n : cluster.running()) {
                for (int s = 0; s < SHARDS; s++) {
                    String topic = topics.get(s);
                    for (int other = 0; other < SHARDS; other++) {
                        var store = n.node().shards().get(other).store();
                        boolean holds = !store.durableGroups(topic).isEmpty();
                        assertEquals(other == s, holds, n.id() + ": shard " + other + " holding " + topic + "'s group");
                    }
                }
            }
        });
        for (TestNode n : cluster.running()) {
            assertTrue(Files.exists(n.dataDir().resolve("db-" + (SHARDS - 1))), "one RocksDB per shard");
        }

        awaitBalanced(cluster);

        // A steady client sends each topic's publishes to its shard's leader: once it has learned the
        // shard map, no node forwards any of them.
        await("a round of publishes that no node forwards").atMost(Duration.ofSeconds(60)).until(() -> {
            long before = forwards(cluster);
            for (String topic : topics) {
                client.publish(Message.builder(topic).payload("routed").build());
            }
            return forwards(cluster) == before;
        });
        long before = forwards(cluster);
        for (int i = 0; i < 20; i++) {
            for (String topic : topics) {
                client.publish(Message.builder(topic).payload("routed-" + i).build());
            }
        }
        assertEquals(before, forwards(cluster), "publishes forwarded between nodes");

        // Per shard on /metrics (a shard label), and ready only as a whole.
        for (TestNode n : cluster.running()) {
            String metrics = http(n, "/metrics");
            for (int s = 0; s < SHARDS; s++) {
                assertTrue(metrics.contains("hourglass_is_leader{shard=\"" + s + "\"}"), n.id() + " shard " + s);
                assertTrue(metrics.contains("hourglass_raft_applied_index{shard=\"" + s + "\"}"), n.id() + " shard " + s);
            }
            assertTrue(metrics.contains("hourglass_disk_free_bytes "), "the node's own series carry no shard label");
            assertEquals("ready (6 shards)", n.node().readiness().detail());
        }
    }

    static String http(TestNode n, String path) throws Exception {
        var response = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + n.httpPort() + path)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), path);
        return response.body();
    }

    private static long forwards(TestCluster cluster) {
        return cluster.running().stream().flatMap(n -> n.node().raftHost().replicas().stream())
                .mapToLong(r -> r.counters().forwards()).sum();
    }

    @Test
    void closingANodeThatLeadsSeveralShardsMakesEachElectAndLosesNothing() throws Exception {
        // No hand-over at close: the followers of each shard must notice and elect, as after a kill.
        TestCluster cluster = resources.start(dir, 3, Map.of("cluster.shards", Integer.toString(SHARDS),
                "raft.handOverTimeout", "0ms"));
        awaitEveryShardLed(cluster);
        await("the leaderships are spread").atMost(Duration.ofSeconds(90))
                .until(() -> leadershipsPerNode(cluster).size() == 3);
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        List<String> topics = oneTopicPerShard();
        publishAndConsume(client, topics, 20, "before");

        // Scheduled messages on every shard that come due after the node is gone.
        Set<String> received = ConcurrentHashMap.newKeySet();
        List<Subscription> subs = new ArrayList<>();
        for (String topic : topics) {
            subs.add(client.subscribe(topic, "late", (m, ctx) -> {
                received.add(m.id());
                ctx.ack();
            }));
        }
        List<Message> later = new ArrayList<>();
        for (String topic : topics) {
            for (int i = 0; i < 20; i++) {
                later.add(Message.builder(topic).payload("due-later-" + i).delay(Duration.ofSeconds(3)).build());
            }
        }
        Set<String> laterIds = client.publishBatch(later).stream().map(PublishResult::id).collect(Collectors.toSet());

        Map<String, Integer> led = leadershipsPerNode(cluster);
        String victimId = led.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
        TestNode victim = cluster.running().stream().filter(n -> n.id().equals(victimId)).findFirst().orElseThrow();
        List<Integer> victimShards = IntStream.range(0, SHARDS)
                .filter(s -> victim.node().raftHost().shard(s).isLeader()).boxed().toList();
        assertTrue(victimShards.size() >= 2, "the victim leads several shards: " + led);
        victim.stop();

        awaitEveryShardLed(cluster);
        for (int s : victimShards) {
            assertNotEquals(victimId, leaderOf(cluster, s).orElseThrow().id(), "shard " + s + " elected another leader");
        }
        await("every message due after the node was gone is delivered").atMost(Duration.ofSeconds(60))
                .until(() -> received.containsAll(laterIds));
        subs.forEach(Subscription::close);
        publishAndConsume(client, topics, 20, "after");
    }

    @Test
    void aWipedNodeCatchesUpOnEveryShard() throws Exception {
        TestCluster cluster = resources.start(dir, 3, Map.of("cluster.shards", Integer.toString(SHARDS),
                "raft.purgeGap", "8"));
        awaitEveryShardLed(cluster);
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        List<String> topics = oneTopicPerShard();
        TestNode wiped = cluster.running().stream().filter(n -> n.node().raftHost().replicas().stream()
                .noneMatch(RaftNode::isLeader)).findFirst().orElse(cluster.node(3));
        wiped.stop();
        // 36 entries on every shard (one batch is one entry per shard), then a snapshot of each shard
        // on the others, which purges their logs: the wiped node must install each shard's checkpoint.
        for (int round = 0; round < 36; round++) {
            List<Message> batch = new ArrayList<>();
            for (String topic : topics) {
                for (int i = 0; i < 5; i++) {
                    batch.add(Message.builder(topic).payload("r" + round + "-" + i).delay(Duration.ofHours(1)).build());
                }
            }
            client.publishBatch(batch);
        }
        for (TestNode n : cluster.running()) {
            for (RaftNode replica : n.node().raftHost().replicas()) {
                replica.admin().snapshotNow(Duration.ofSeconds(30));
            }
        }
        cluster.wipe(wiped);
        wiped.startAgain();
        TestNode reference = cluster.running().stream().filter(n -> n != wiped).findFirst().orElseThrow();
        for (int s = 0; s < SHARDS; s++) {
            int shard = s;
            String topic = topics.get(s);
            await("the wiped node holds shard " + s + "'s messages").atMost(Duration.ofSeconds(90)).until(() ->
                    count(wiped, shard, topic) == count(reference, shard, topic) && count(reference, shard, topic) == 180);
        }
    }

    @Test
    void aNodeAddedJoinsEveryShardAndLeavesEveryShardWhenRemoved() throws Exception {
        TestCluster cluster = resources.start(dir, 3, Map.of("cluster.shards", Integer.toString(SHARDS)));
        awaitEveryShardLed(cluster);
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        List<String> topics = oneTopicPerShard();
        // Shards 3-5 stay idle: their logs hold only Raft's own entries, and the new node (which Ratis
        // always tells to install a checkpoint) must still get a checkpoint at a real index of them.
        publishAndConsume(client, topics.subList(0, 3), 10, "before");

        TestNode joiner = cluster.startJoiner();
        Map<String, String> js = cluster.settingsOf(joiner);
        var admin = client.admin();
        // The balancer may be moving a shard's leadership right then; Ratis then refuses the change
        // (UNAVAILABLE: "is stepping down", a change under way), and an operator runs the command
        // again, as this does.
        java.util.concurrent.atomic.AtomicReference<List<String>> added = new java.util.concurrent.atomic.AtomicReference<>();
        await("the node is added").atMost(Duration.ofSeconds(60)).ignoreExceptionsMatching(
                e -> e instanceof io.hourglass.client.UnavailableException
                        || String.valueOf(e.getMessage()).contains("stepping down")).until(() -> {
                    added.set(admin.addNode(joiner.id(), "127.0.0.1", Integer.parseInt(js.get("raft.port")),
                            Integer.parseInt(js.get("grpc.port"))).getVotersList());
                    return true;
                });
        var voters = added.get();
        assertTrue(voters.contains(joiner.id()), voters.toString());
        for (int s = 0; s < SHARDS; s++) {
            int shard = s;
            await("shard " + s + " has four voters and the new node applied its entries").atMost(Duration.ofSeconds(90))
                    .until(() -> {
                        RaftNode leader = leaderOf(cluster, shard).map(n -> n.node().raftHost().shard(shard)).orElse(null);
                        RaftNode mine = joiner.node().raftHost().shard(shard);
                        return leader != null && leader.admin().members().size() == 4
                                && mine.status().appliedIndex() >= leader.status().commitIndex() - 5;
                    });
        }
        assertEquals(SHARDS * 4, admin.clusterStatus().getMembersCount(), "cluster status: one record per node and shard");

        admin.removeNode(joiner.id());
        for (int s = 0; s < SHARDS; s++) {
            int shard = s;
            await("shard " + s + " is back to three voters, none of them the removed node").atMost(Duration.ofSeconds(60))
                    .until(() -> {
                        TestNode leader = leaderOf(cluster, shard).filter(n -> n != joiner).orElse(null);
                        if (leader == null) {
                            return false;
                        }
                        List<RaftNode.Member> members = leader.node().raftHost().shard(shard).admin().members();
                        return members.size() == 3 && members.stream().noneMatch(m -> m.id().equals(joiner.id()));
                    });
        }
        joiner.stop();
        publishAndConsume(client, topics, 10, "after");
    }

    @Test
    void aDataDirectoryKeepsTheShardCountItWasCreatedWith() {
        Path data = dir.resolve("standalone");
        TestNode.start(data).close(); // created with one shard
        var refused = org.junit.jupiter.api.Assertions.assertThrows(io.hourglass.core.config.ConfigException.class,
                () -> TestNode.start(data, Map.of("cluster.shards", "4")));
        assertTrue(refused.getMessage().contains("cluster.shards=1") && refused.getMessage().contains("cannot change"),
                refused.getMessage());
        TestNode.start(data).close(); // and still starts with the count it has

        Path four = dir.resolve("four");
        TestNode.start(four, Map.of("cluster.shards", "4")).close();
        var back = org.junit.jupiter.api.Assertions.assertThrows(io.hourglass.core.config.ConfigException.class,
                () -> TestNode.start(four, Map.of("cluster.shards", "1")));
        assertTrue(back.getMessage().contains("cluster.shards=4"), back.getMessage());
    }

    @Test
    void aDeadLetterTopicOnAnotherShardGetsEachMessageOnce() throws Exception {
        TestCluster cluster = resources.start(dir, 3, Map.of("cluster.shards", Integer.toString(SHARDS)));
        awaitEveryShardLed(cluster);
        HourglassClient client = resources.own(HourglassClient.builder().servers(cluster.targetList()).build());
        String topic = oneTopicPerShard().get(0);
        String dlq = IntStream.range(0, 100).mapToObj(n -> "dlq-" + n)
                .filter(t -> ShardHash.shardOf(t, SHARDS) != 0).findFirst().orElseThrow();
        client.admin().configureGroup(topic, "g", List.of(), 2, dlq);
        List<io.hourglass.client.ReceivedMessage> dead = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Subscription s = client.subscribe(topic, "g", (m, ctx) -> ctx.nack());
             Subscription d = client.subscribe(dlq, "ops", (m, ctx) -> {
                 dead.add(m);
                 ctx.ack();
             })) {
            Set<String> ids = client.publishBatch(IntStream.range(0, 5).mapToObj(i -> Message.of(topic, "poison-" + i))
                    .toList()).stream().map(PublishResult::id).collect(Collectors.toSet());
            await("every message moved to the dead-letter topic").atMost(Duration.ofSeconds(60))
                    .until(() -> dead.stream().map(m -> m.headers().get("hourglass-dead-letter-id"))
                            .collect(Collectors.toSet()).equals(ids));
            await("and gone from its own topic").atMost(Duration.ofSeconds(30)).until(() ->
                    cluster.running().stream().allMatch(n -> count(n, 0, topic) == 0));
            assertEquals(5, dead.size(), "each message moved once");
            dead.forEach(m -> assertEquals("2", m.headers().get("hourglass-dead-letter-deliveries")));
            int dlqShard = ShardHash.shardOf(dlq, SHARDS);
            assertEquals(0, count(cluster.running().get(0), 0, dlq), "no copy on the source topic's shard");
            // Every replica of that shard, once it has applied the group's registration (a follower may lag).
            await("the dead-letter topic lives on its own shard").atMost(Duration.ofSeconds(30)).until(() ->
                    cluster.running().stream().allMatch(n -> n.node().shards().get(dlqShard).store()
                            .durableGroups(dlq).contains("ops")));
        }
    }

    private static long count(TestNode n, int shard, String topic) {
        if (!n.isRunning()) {
            return -1;
        }
        long[] c = {0};
        n.node().shards().get(shard).store().queue().scanTopic(topic, (k, m) -> {
            c[0]++;
            return true;
        });
        return c[0];
    }
}
