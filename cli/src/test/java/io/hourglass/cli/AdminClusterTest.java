package io.hourglass.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hourglass.client.HourglassClient;
import io.hourglass.client.Subscription;
import io.hourglass.server.testing.TestCluster;
import io.hourglass.server.testing.TestNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The admin commands against a real 3-node cluster, over TCP. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class AdminClusterTest {
    private final ObjectMapper json = new ObjectMapper();
    private TestCluster cluster;
    private HourglassClient consumerClient;
    private Subscription subscription;

    @BeforeAll
    void start(@TempDir Path dir) {
        cluster = TestCluster.start(dir, 3, Map.of());
        Cli.Result published = run("publish", "orders", "p", "--count", "3");
        assertEquals(0, published.exitCode(), published.err());
        consumerClient = HourglassClient.builder().servers(cluster.targetList()).build();
        subscription = consumerClient.subscribe("live", "workers", (message, context) -> { });
    }

    @AfterAll
    void stop() {
        if (subscription != null) {
            subscription.close();
        }
        if (consumerClient != null) {
            consumerClient.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private Cli.Result run(String... args) {
        List<String> all = new ArrayList<>(List.of("--servers", cluster.targets(), "--deadline", "20s"));
        all.addAll(List.of(args));
        return Cli.runWith(ClientFactory.grpc(), "", all.toArray(new String[0]));
    }

    private List<JsonNode> json(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("--output", "json"));
        all.addAll(List.of(args));
        Cli.Result r = run(all.toArray(new String[0]));
        assertEquals(0, r.exitCode(), r.err() + "\n" + cluster.describe());
        List<JsonNode> records = new ArrayList<>();
        for (String line : r.outLines()) {
            records.add(json.readTree(line));
        }
        return records;
    }

    @Test
    void clusterStatusShowsEveryMember() throws Exception {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<JsonNode> members = json("cluster", "status");
            assertEquals(3, members.size());
            assertEquals(1, members.stream().filter(m -> m.get("leader").asBoolean()).count());
            for (JsonNode m : members) {
                for (String field : List.of("id", "address", "role", "term", "commitIndex", "appliedIndex", "lag", "up")) {
                    assertTrue(m.has(field), field + " in " + m);
                }
                assertTrue(m.get("up").asBoolean(), m.toString());
                assertTrue(m.get("term").isIntegralNumber(), m.toString());
            }
        });
    }

    @Test
    void clusterStatusShowsTheMetadataGroup() throws Exception {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<JsonNode> members = json("cluster", "status", "--metadata");
            assertEquals(3, members.size(), members.toString());
            assertEquals(1, members.stream().filter(m -> m.get("leader").asBoolean()).count(), members.toString());
            assertTrue(members.stream().allMatch(m -> m.get("shard").asText().equals("meta") && m.get("up").asBoolean()),
                    members.toString());
            Cli.Result r = run("cluster", "status");
            String leader = members.stream().filter(m -> m.get("leader").asBoolean()).findFirst().orElseThrow()
                    .get("id").asText();
            assertTrue(r.err().contains("metadata leader: " + leader), r.err());
        });
    }

    @Test
    void topicCommandsSeeThePublishedMessages() throws Exception {
        List<JsonNode> topics = json("topic", "list");
        assertTrue(topics.stream().anyMatch(t -> t.get("topic").asText().equals("orders")), topics.toString());
        List<JsonNode> page = json("topic", "list", "--prefix", "ord", "--limit", "1");
        assertEquals(List.of("orders"), page.stream().map(t -> t.get("topic").asText()).toList(), "a page by prefix");
        assertEquals(List.of(), json("topic", "list", "--prefix", "ord", "--offset", "1"), "past the only match");

        JsonNode stats = json("topic", "stats", "orders").get(0);
        assertEquals("orders", stats.get("topic").asText());
        assertEquals(3, stats.get("pending").asLong(), stats.toString());

        List<JsonNode> peeked = json("topic", "peek", "orders", "--limit", "2");
        assertEquals(2, peeked.size());
        assertTrue(peeked.get(0).get("payload").asText().startsWith("p-"), peeked.toString());
        assertTrue(peeked.get(0).get("enqueuedAt").asLong() > 1_600_000_000_000L, peeked.toString());

        Cli.Result missing = run("topic", "stats", "no-such-topic");
        assertEquals(ExitCodes.NOT_FOUND, missing.exitCode(), missing.err());
        assertEquals(1, missing.errLines().size(), missing.err());
    }

    @Test
    void consumerAndGroupLists() throws Exception {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<JsonNode> consumers = json("consumer", "list", "live");
            assertEquals(1, consumers.size(), consumers.toString());
            assertEquals("workers", consumers.get(0).get("group").asText());
        });
        for (JsonNode group : json("group", "list", "live")) {
            assertEquals("live", group.get("topic").asText());
        }
    }

    @Test
    void snapshotTransferLeaderAndRemovingTheLeader() throws Exception {
        JsonNode snapshot = json("cluster", "snapshot").get(0);
        assertTrue(snapshot.get("index").asLong() >= 0, snapshot.toString());
        String other = cluster.followers().get(0).id();
        assertEquals(other, json("cluster", "snapshot", "--node", other).get(0).get("nodeId").asText());

        TestNode leader = cluster.awaitLeader();
        TestNode target = cluster.followers().get(0);
        JsonNode moved = json("cluster", "transfer-leader", target.id()).get(0);
        assertEquals(target.id(), moved.get("leaderId").asText());
        await().atMost(Duration.ofSeconds(30)).until(() -> cluster.leader().filter(l -> l == target).isPresent());

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Cli.Result removeLeader = run("cluster", "remove-node", target.id());
            assertEquals(ExitCodes.FAILED_PRECONDITION, removeLeader.exitCode(), removeLeader.err());
            assertEquals(1, removeLeader.errLines().size(), removeLeader.err());
        });
        Cli.Result unknown = run("cluster", "transfer-leader", "n99");
        assertEquals(ExitCodes.NOT_FOUND, unknown.exitCode(), unknown.err());
        assertTrue(leader.isRunning());
    }

    @Test
    void purgeDeleteGroupAddAndRemoveANodeThroughTheCli() throws Exception {
        assertEquals(0, run("publish", "purge-me", "x", "--count", "4").exitCode());
        List<JsonNode> purged = json("topic", "purge", "purge-me");
        assertEquals(4, purged.get(0).get("purged").asInt());
        assertEquals(5, run("topic", "stats", "purge-me").exitCode(), "nothing is left of a topic without groups");

        assertEquals(0, run("publish", "grp", "y").exitCode());
        Cli.Result consumed = run("consume", "grp", "--group", "temp", "--count", "1", "--timeout", "20s");
        assertEquals(0, consumed.exitCode(), consumed.err());
        assertTrue(json("group", "list", "grp").stream().anyMatch(g -> g.get("group").asText().equals("temp")));
        assertEquals(true, json("group", "delete", "grp", "temp").get(0).get("deleted").asBoolean());
        assertEquals(5, run("group", "delete", "grp", "temp").exitCode(), "gone now: NOT_FOUND");

        TestNode joiner = cluster.startJoiner();
        Map<String, String> s = cluster.settingsOf(joiner);
        String spec = joiner.id() + "=127.0.0.1:" + s.get("raft.port") + ":" + s.get("grpc.port");
        List<JsonNode> added = json("cluster", "add-node", spec);
        assertTrue(added.get(0).get("voters").toString().contains(joiner.id()), added.toString());
        String leaderId = cluster.awaitLeader().id();
        assertEquals(leaderId, added.get(0).get("leaderId").asText(), "add-node names the leader: " + added);
        assertEquals(7, run("cluster", "add-node", spec).exitCode(), "adding it twice: ALREADY_EXISTS");
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            List<JsonNode> members = json("cluster", "status");
            assertEquals(4, members.size());
            assertTrue(members.stream().allMatch(m -> m.get("up").asBoolean()), members.toString());
        });
        List<JsonNode> removed = json("cluster", "remove-node", joiner.id());
        assertTrue(!removed.get(0).get("voters").toString().contains(joiner.id()), removed.toString());
        assertTrue(removed.get(0).get("leaderId").isTextual(), removed.toString());
        joiner.stop();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertEquals(3, json("cluster", "status").size()));
    }

    @Test
    void clusterDigestAsksEveryMemberAndTheyAgree() throws Exception {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Cli.Result r = run("--output", "json", "cluster", "digest");
            assertEquals(0, r.exitCode(), r.err());
            assertEquals("digests agree at every shared applied index", r.err().strip());
            List<JsonNode> nodes = new ArrayList<>();
            for (String line : r.outLines()) {
                nodes.add(json.readTree(line));
            }
            assertEquals(3, nodes.size(), r.out());
            assertEquals(1, nodes.stream().map(n -> n.get("appliedIndex").asLong() + "/" + n.get("digest").asText())
                    .distinct().count(), "idle cluster: same index, same digest on every member: " + nodes);
            assertEquals(64, nodes.get(0).get("digest").asText().length());
            assertEquals(List.of("id", "appliedIndex", "digest", "error"), fieldNames(nodes.get(0)));
        });
    }

    @Test
    void messageGetAndDeleteWorkThroughAnyNode() throws Exception {
        for (TestNode node : cluster.nodes()) {
            Cli.Result published = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(), "--output", "json",
                    "publish", "inspect", "body", "--delay", "1h", "--header", "k=v");
            assertEquals(0, published.exitCode(), published.err());
            String id = json.readTree(published.out()).get("id").asText();
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                Cli.Result got = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(), "--output", "json",
                        "message", "get", "inspect", id);
                assertEquals(0, got.exitCode(), got.err());
                JsonNode m = json.readTree(got.out());
                assertEquals("body", m.get("payload").asText());
                assertEquals("v", m.get("headers").get("k").asText());
            });
            Cli.Result deleted = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(), "--output", "json",
                    "message", "delete", "inspect", id);
            assertEquals(0, deleted.exitCode(), deleted.err());
            for (TestNode other : cluster.nodes()) {
                await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertEquals(ExitCodes.NOT_FOUND,
                        Cli.runWith(ClientFactory.grpc(), "", "--servers", other.target(), "message", "get", "inspect", id)
                                .exitCode(), "deleted on every replica"));
            }
            Cli.Result again = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(),
                    "message", "delete", "inspect", id);
            assertEquals(ExitCodes.NOT_FOUND, again.exitCode(), again.err());
            assertEquals(1, again.errLines().size(), again.err());
        }
    }

    @Test
    void publishEveryRecursUntilCancelledByItsKeyAndRefusesBadInput() throws Exception {
        JsonNode published = json("publish", "ticks", "tick", "--key", "cron", "--every", "1h", "--delay", "1h").get(0);
        assertTrue(published.get("replaced").isNull());
        assertEquals("cancelled", json("cancel", "ticks", "--key", "cron").get(0).get("outcome").asText());
        Cli.Result noKey = run("publish", "ticks", "tick", "--every", "1h");
        assertEquals(ExitCodes.USAGE, noKey.exitCode());
        assertTrue(noKey.err().contains("--every needs --key"), noKey.err());
        Cli.Result tooFast = run("publish", "ticks", "tick", "--key", "fast", "--every", "500ms");
        assertEquals(ExitCodes.INVALID_REQUEST, tooFast.exitCode(), tooFast.err());
        assertTrue(tooFast.err().contains("between 1s"), tooFast.err());
    }

    @Test
    void groupConfigureSetsMergesAndListsAPolicyAndRefusesBadInput() throws Exception {
        JsonNode set = json("group", "configure", "policed", "workers", "--backoff", "1s,5s,30s").get(0);
        assertEquals("1s,5s,30s", set.get("backoff").asText());
        assertEquals(0, set.get("maxDeliveries").asInt());
        JsonNode merged = json("group", "configure", "policed", "workers", "--max-deliveries", "4",
                "--dead-letter", "policed.dlq").get(0);
        assertEquals("1s,5s,30s", merged.get("backoff").asText(), "a setting not given is kept");
        assertEquals(4, merged.get("maxDeliveries").asInt());
        assertEquals("policed.dlq", merged.get("deadLetter").asText());
        JsonNode listed = json("group", "list", "policed").get(0);
        assertEquals("workers", listed.get("group").asText());
        assertEquals("1s,5s,30s", listed.get("backoff").asText());
        assertEquals(4, listed.get("maxDeliveries").asInt());

        Cli.Result badStep = run("group", "configure", "policed", "workers", "--backoff", "1s,soon");
        assertEquals(ExitCodes.USAGE, badStep.exitCode());
        assertTrue(badStep.err().contains("'soon' is not a duration"), badStep.err());
        Cli.Result nothing = run("group", "configure", "policed", "workers");
        assertEquals(ExitCodes.USAGE, nothing.exitCode());
        Cli.Result noDeadLetter = run("group", "configure", "policed", "others", "--max-deliveries", "2");
        assertEquals(ExitCodes.INVALID_REQUEST, noDeadLetter.exitCode());
        assertTrue(noDeadLetter.err().contains("needs a dead-letter topic"), noDeadLetter.err());
        assertEquals(1, noDeadLetter.err().strip().lines().count(), "one line: " + noDeadLetter.err());
        Cli.Result self = run("group", "configure", "policed", "workers", "--dead-letter", "policed");
        assertEquals(ExitCodes.INVALID_REQUEST, self.exitCode(), self.err());
    }

    @Test
    void cancelThroughEachNodeWinsForAPendingMessageAndExits5ForOneAlreadyDelivered() throws Exception {
        for (TestNode node : cluster.running()) {
            Cli.Result published = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(), "--output", "json",
                    "publish", "to-cancel", "later", "--delay", "1h");
            assertEquals(0, published.exitCode(), published.err());
            String id = json.readTree(published.out()).get("id").asText();
            Cli.Result cancelled = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(), "--output", "json",
                    "cancel", "to-cancel", id);
            assertEquals(0, cancelled.exitCode(), cancelled.err());
            JsonNode record = json.readTree(cancelled.out());
            assertEquals(List.of("id", "topic", "outcome"), fieldNames(record));
            assertEquals("cancelled", record.get("outcome").asText());
            Cli.Result again = Cli.runWith(ClientFactory.grpc(), "", "--servers", node.target(), "cancel", "to-cancel", id);
            assertEquals(ExitCodes.NOT_FOUND, again.exitCode(), again.err());
            assertEquals(1, again.errLines().size(), again.err());
        }

        JsonNode first = json("publish", "keyed", "v1", "--key", "k", "--delay", "1h").get(0);
        assertTrue(first.get("replaced").isNull(), first.toString());
        JsonNode second = json("publish", "keyed", "v2", "--key", "k", "--delay", "1h").get(0);
        assertEquals(first.get("id").asText(), second.get("replaced").asText(), "names the id it replaced");
        assertEquals(ExitCodes.NOT_FOUND, run("message", "get", "keyed", first.get("id").asText()).exitCode());
        assertEquals("cancelled", json("cancel", "keyed", "--key", "k").get(0).get("outcome").asText());
        assertEquals(ExitCodes.NOT_FOUND, run("cancel", "keyed", "--key", "k").exitCode(), "nothing pending under k");
        assertEquals(ExitCodes.USAGE, run("publish", "keyed", "--key", "k", "--count", "2").exitCode());

        String id = json.readTree(run("--output", "json", "publish", "to-cancel-now", "now").out()).get("id").asText();
        Cli.Result consumed = run("consume", "to-cancel-now", "--group", "g", "--count", "1", "--timeout", "20s",
                "--no-ack");
        assertEquals(0, consumed.exitCode(), consumed.err());
        Cli.Result late = run("cancel", "to-cancel-now", id);
        assertEquals(ExitCodes.NOT_FOUND, late.exitCode(), late.err());
        assertTrue(late.out().contains("already-delivered"), late.out());
        assertEquals(1, late.errLines().size(), late.err());
        assertTrue(late.err().contains("already delivered"), late.err());
        assertEquals(ExitCodes.USAGE, run("cancel", "to-cancel-now").exitCode(), "ID missing");
    }

    @Test
    void topicScheduleCountsStoredMessagesPerDueBucket() throws Exception {
        for (String delay : List.of("10m", "20m", "90m")) {
            assertEquals(0, run("publish", "due-view", "x", "--delay", delay).exitCode());
        }
        long from = System.currentTimeMillis();
        List<JsonNode> buckets = json("topic", "schedule", "due-view", "--bucket", "1h", "--from", Long.toString(from),
                "--until", Long.toString(from + 3 * 3_600_000L));
        assertEquals(3, buckets.size(), buckets.toString());
        assertEquals(List.of("from", "until", "count"), fieldNames(buckets.get(0)));
        assertEquals(List.of(2L, 1L, 0L), buckets.stream().map(b -> b.get("count").asLong()).toList(), buckets.toString());
        assertEquals(from + 3_600_000L, buckets.get(0).get("until").asLong());
        Cli.Result narrow = run("topic", "schedule", "due-view", "--bucket", "1h", "--from", "+30m", "--until", "+1h");
        assertEquals(0, narrow.exitCode(), narrow.err());
        assertTrue(narrow.err().contains("2 due before the window, 1 after it"), narrow.err());
        assertEquals(ExitCodes.INVALID_REQUEST, run("topic", "schedule", "due-view", "--bucket", "1ms",
                "--from", "now", "--until", "+1h").exitCode(), "more than 10000 buckets");
        assertEquals(ExitCodes.USAGE, run("topic", "schedule", "due-view", "--from", "yesterday").exitCode());
        List<JsonNode> window = json("topic", "peek", "due-view", "--from", "+15m", "--until", "+1h");
        assertEquals(1, window.size(), "only the message due in 20 minutes: " + window);
        assertEquals(3, json("topic", "peek", "due-view").size());
        assertEquals(ExitCodes.INVALID_REQUEST, run("topic", "peek", "due-view", "--from", "+1h", "--until", "+1m").exitCode());
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
