package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import io.hourglass.api.v1.AddNodeRequest;
import io.hourglass.api.v1.ClusterStatusResponse;
import io.hourglass.api.v1.ConsumerInfo;
import io.hourglass.api.v1.DeleteGroupRequest;
import io.hourglass.api.v1.GroupInfo;
import io.hourglass.api.v1.ListConsumersRequest;
import io.hourglass.api.v1.MemberStatus;
import io.hourglass.api.v1.NodeInfo;
import io.hourglass.api.v1.PeekTopicRequest;
import io.hourglass.api.v1.PeekedMessage;
import io.hourglass.api.v1.SnapshotRequest;
import io.hourglass.api.v1.TopicInfo;
import io.hourglass.api.v1.TransferLeaderRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The admin commands ({@code cluster}, {@code topic}, {@code group}, {@code consumer}) against a fake Admin service. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AdminCommandTest {
    private final ObjectMapper json = new ObjectMapper();
    private FakeAdmin admin;

    @BeforeEach
    void start() throws Exception {
        admin = new FakeAdmin();
    }

    @AfterEach
    void stop() {
        admin.close();
    }

    private Cli.Result run(String... args) {
        List<String> all = new ArrayList<>(List.of("--servers", admin.address(), "--deadline", "500ms"));
        all.addAll(List.of(args));
        return Cli.runWith(Cli.IN_PROCESS, "", all.toArray(new String[0]));
    }

    private List<JsonNode> records(Cli.Result r) throws Exception {
        assertEquals(0, r.exitCode(), r.err());
        List<JsonNode> records = new ArrayList<>();
        for (String line : r.outLines()) {
            records.add(json.readTree(line));
        }
        return records;
    }

    private JsonNode onlyRecord(Cli.Result r) throws Exception {
        List<JsonNode> records = records(r);
        assertEquals("", r.err());
        assertEquals(1, records.size(), r.out());
        return records.get(0);
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static void assertError(int code, Cli.Result r) {
        assertEquals(code, r.exitCode(), r.err());
        assertEquals("", r.out());
        assertEquals(1, r.errLines().size(), r.err());
        assertTrue(r.err().startsWith("hourglass: "), r.err());
    }

    private static MemberStatus member(String id, boolean up, String role, long lag) {
        NodeInfo.Builder node = NodeInfo.newBuilder().setId(id).setAddress("h-" + id + ":7070")
                .setRaftAddress("h-" + id + ":7071");
        if (up) {
            node.setRole(role).setTerm(3).setCommitIndex(100).setAppliedIndex(100 - lag).setLeaderId("n1").setReady(true);
        }
        return MemberStatus.newBuilder().setNode(node).setUp(up).setLag(lag).setLastContactMs(up ? 5 : -1)
                .setError(up ? "" : "connection refused").build();
    }

    @Test
    void clusterStatusPrintsOneRecordPerMemberAndTheSummaryOnStderr() throws Exception {
        admin.cluster = ClusterStatusResponse.newBuilder().setLeaderId("n1").setHasQuorum(true)
                .addMembers(member("n1", true, "LEADER", 0)).addMembers(member("n2", true, "FOLLOWER", 2))
                .addMembers(member("n3", false, "", 0)).build();
        Cli.Result r = run("--output", "json", "cluster", "status");
        List<JsonNode> records = records(r);

        assertEquals(3, records.size(), r.out());
        assertEquals(List.of("leader: n1, quorum: yes"), r.errLines());
        for (JsonNode record : records) {
            assertEquals(List.of("id", "shard", "address", "role", "term", "commitIndex", "appliedIndex", "lag", "up",
                    "stalled", "raftAddress", "lastContactMs", "leader"), fieldNames(record));
            assertEquals(0, record.get("shard").asInt(), "a cluster of one shard: shard 0");
        }
        JsonNode n1 = records.get(0);
        assertEquals("n1", n1.get("id").asText());
        assertEquals("h-n1:7070", n1.get("address").asText());
        assertEquals("LEADER", n1.get("role").asText());
        assertEquals(3, n1.get("term").asLong());
        assertTrue(n1.get("commitIndex").isIntegralNumber());
        assertTrue(n1.get("up").asBoolean());
        assertTrue(n1.get("leader").asBoolean());
        JsonNode n2 = records.get(1);
        assertEquals(2, n2.get("lag").asLong());
        assertEquals(98, n2.get("appliedIndex").asLong());
        assertEquals(false, n2.get("leader").asBoolean());
        JsonNode n3 = records.get(2);
        assertEquals(false, n3.get("up").asBoolean());
        assertTrue(n3.get("role").isNull());
        assertTrue(n3.get("term").isNull());
        assertEquals(-1, n3.get("lastContactMs").asLong());
    }

    @Test
    void clusterStatusTableAndNoQuorum() {
        admin.cluster = ClusterStatusResponse.newBuilder().addMembers(member("n1", false, "", 0)).build();
        Cli.Result r = run("cluster", "status");

        assertEquals(0, r.exitCode(), r.err());
        assertEquals(2, r.outLines().size(), r.out());
        assertTrue(r.outLines().get(0).startsWith("ID"), r.out());
        assertTrue(r.outLines().get(1).startsWith("n1"), r.out());
        assertEquals(List.of("leader: none, quorum: NO"), r.errLines());
    }

    @Test
    void addNodeParsesTheMemberAndPrintsTheMembership() throws Exception {
        JsonNode record = onlyRecord(run("--output", "json", "cluster", "add-node", "n4=host4:7171:7170"));

        assertEquals(List.of("leaderId", "voters"), fieldNames(record));
        assertEquals("n1", record.get("leaderId").asText());
        assertEquals(4, record.get("voters").size());
        assertEquals(AddNodeRequest.newBuilder().setId("n4").setHost("host4").setRaftPort(7171).setGrpcPort(7170)
                .build(), admin.requests.get(0));
    }

    @Test
    void addNodeRefusesABadSpecWithoutCallingAndATwiceAddedNodeWith7() {
        assertError(ExitCodes.USAGE, run("cluster", "add-node", "n4=host4:7171"));
        assertError(ExitCodes.USAGE, run("cluster", "add-node", "host4:7171:7170"));
        assertError(ExitCodes.USAGE, run("cluster", "add-node", "n4=host4:7171:99999"));
        assertError(ExitCodes.USAGE, run("cluster", "add-node"));
        assertTrue(admin.requests.isEmpty());
        assertError(ExitCodes.ALREADY_EXISTS, run("cluster", "add-node", "n2=h:1:2"));
    }

    @Test
    void removeNode() throws Exception {
        JsonNode record = onlyRecord(run("cluster", "remove-node", "n3", "--output", "json"));
        assertTrue(record.get("leaderId").isNull());
        assertEquals("[\"n1\",\"n2\"]", record.get("voters").toString());
        assertError(ExitCodes.FAILED_PRECONDITION, run("cluster", "remove-node", "n1"));
        assertError(ExitCodes.NOT_FOUND, run("cluster", "remove-node", "nX"));
        assertError(ExitCodes.USAGE, run("cluster", "remove-node", " "));
    }

    @Test
    void transferLeader() throws Exception {
        JsonNode record = onlyRecord(run("--output", "json", "cluster", "transfer-leader", "n2"));
        assertEquals("n2", record.get("leaderId").asText());
        assertEquals(TransferLeaderRequest.newBuilder().setId("n2").build(), admin.requests.get(0));
        assertError(ExitCodes.NOT_FOUND, run("cluster", "transfer-leader", "nX"));
    }

    @Test
    void snapshotOnTheAnsweringNodeOrOnANamedOne() throws Exception {
        JsonNode record = onlyRecord(run("--output", "json", "cluster", "snapshot"));
        assertEquals(List.of("nodeId", "index"), fieldNames(record));
        assertEquals("n1", record.get("nodeId").asText());
        assertEquals(42, record.get("index").asLong());
        assertEquals(SnapshotRequest.getDefaultInstance(), admin.requests.get(0));

        assertEquals("n2", onlyRecord(run("--output", "json", "cluster", "snapshot", "--node", "n2"))
                .get("nodeId").asText());
        assertEquals(SnapshotRequest.newBuilder().setNodeId("n2").build(), admin.requests.get(1));
        assertError(ExitCodes.NOT_FOUND, run("cluster", "snapshot", "--node", "nX"));
    }

    @Test
    void rebalancePrintsEachShardThatMovedAndTheNodesThatDidNotAnswer() throws Exception {
        Cli.Result r = run("--output", "json", "cluster", "rebalance");
        List<JsonNode> records = records(r);
        assertEquals(1, records.size(), r.out());
        JsonNode record = records.get(0);
        assertEquals(List.of("shard", "from", "to"), fieldNames(record));
        assertEquals(2, record.get("shard").asInt());
        assertEquals("n1", record.get("from").asText());
        assertEquals("n3", record.get("to").asText());
        assertEquals(List.of("node n2 did not answer: connection refused"), r.errLines());
        assertEquals(io.hourglass.api.v1.RebalanceRequest.getDefaultInstance(), admin.requests.get(0));
    }

    private static final TopicInfo ORDERS = TopicInfo.newBuilder().setTopic("orders").setPending(10).setDueNow(4)
            .setScheduled(6).setInFlight(1).addGroups("billing").setConsumers(2).setOldestDueLatenessMs(1500)
            .setExpiringSoon(3).putPendingPerGroup("billing", 9).build();

    @Test
    void topicListAndStats() throws Exception {
        admin.topics = List.of(ORDERS, TopicInfo.newBuilder().setTopic("empty").build());
        List<JsonNode> records = records(run("--output", "json", "topic", "list"));
        assertEquals(2, records.size());
        JsonNode orders = records.get(0);
        assertEquals(List.of("topic", "pending", "dueNow", "scheduled", "inFlight", "groups", "consumers",
                "oldestDueLatenessMs", "expiringSoon", "pendingPerGroup"), fieldNames(orders));
        assertEquals("{\"topic\":\"orders\",\"pending\":10,\"dueNow\":4,\"scheduled\":6,\"inFlight\":1,"
                + "\"groups\":[\"billing\"],\"consumers\":2,\"oldestDueLatenessMs\":1500,\"expiringSoon\":3,"
                + "\"pendingPerGroup\":{\"billing\":9}}", orders.toString());
        assertEquals("[]", records.get(1).get("groups").toString());

        JsonNode stats = onlyRecord(run("--output", "json", "topic", "stats", "orders"));
        assertEquals(orders, stats);

        Cli.Result table = run("topic", "list");
        assertEquals(0, table.exitCode(), table.err());
        assertEquals(3, table.outLines().size(), table.out());
        assertTrue(table.outLines().get(1).contains("billing=9"), table.out());
    }

    @Test
    void topicErrors() {
        assertError(ExitCodes.NOT_FOUND, run("topic", "stats", "missing"));
        assertError(ExitCodes.INVALID_REQUEST, run("topic", "stats", "bad"));
        assertError(ExitCodes.USAGE, run("topic", "stats"));
        assertError(ExitCodes.USAGE, run("topic", "stats", ""));
        assertError(ExitCodes.NOT_FOUND, run("topic", "purge", "missing", "--yes"));
        assertError(ExitCodes.NOT_FOUND, run("topic", "peek", "missing"));
        assertError(ExitCodes.USAGE, run("topic", "peek", "orders", "--limit", "0"));
        assertError(ExitCodes.USAGE, run("topic", "bogus"));
        assertError(ExitCodes.USAGE, run("topic"));
    }

    @Test
    void topicPurge() throws Exception {
        JsonNode record = onlyRecord(run("--output", "json", "topic", "purge", "orders"));
        assertEquals("{\"topic\":\"orders\",\"purged\":7}", record.toString());
    }

    @Test
    void topicPeekPrintsTheStoredMessages() throws Exception {
        admin.peeked = List.of(
                PeekedMessage.newBuilder().setId("m1").setPayload(ByteString.copyFromUtf8("héllo"))
                        .putHeaders("k", "v").setEnqueuedAtMs(1_000).setDueAtMs(2_000).setExpiresAtMs(3_000).build(),
                PeekedMessage.newBuilder().setId("m2").setPayload(ByteString.copyFromUtf8("x"))
                        .setEnqueuedAtMs(1_000).setDueAtMs(1_000).build());
        List<JsonNode> records = records(run("--output", "json", "topic", "peek", "orders", "--limit", "5"));

        assertEquals(2, records.size());
        assertEquals("{\"id\":\"m1\",\"topic\":\"orders\",\"payload\":\"héllo\",\"payloadBytes\":6,\"headers\":{\"k\":\"v\"},"
                + "\"enqueuedAt\":1000,\"dueAt\":2000,\"expiresAt\":3000}", records.get(0).toString());
        assertTrue(records.get(1).get("expiresAt").isNull());
        assertEquals(PeekTopicRequest.newBuilder().setTopic("orders").setLimit(5).build(), admin.requests.get(0));

        assertEquals(3, run("topic", "peek", "orders").outLines().size());
        assertEquals(20, ((PeekTopicRequest) admin.requests.get(1)).getLimit());
    }

    @Test
    void groupListAndDelete() throws Exception {
        admin.groups = List.of(GroupInfo.newBuilder().setGroup("billing").setPending(9).setConsumers(2).build());
        JsonNode record = onlyRecord(run("--output", "json", "group", "list", "orders"));
        assertEquals("{\"topic\":\"orders\",\"group\":\"billing\",\"pending\":9,\"consumers\":2,"
                + "\"backoff\":\"\",\"maxDeliveries\":0,\"deadLetter\":\"\"}", record.toString());
        assertError(ExitCodes.NOT_FOUND, run("group", "list", "missing"));

        JsonNode deleted = onlyRecord(run("--output", "json", "group", "delete", "orders", "billing"));
        assertEquals("{\"topic\":\"orders\",\"group\":\"billing\",\"deleted\":true}", deleted.toString());
        assertEquals(DeleteGroupRequest.newBuilder().setTopic("orders").setGroup("billing").build(),
                admin.requests.get(admin.requests.size() - 1));
        assertError(ExitCodes.NOT_FOUND, run("group", "delete", "orders", "missing"));
        assertError(ExitCodes.USAGE, run("group", "delete", "orders"));
    }

    @Test
    void consumerListOfAllOrOneTopic() throws Exception {
        admin.consumers = List.of(
                ConsumerInfo.newBuilder().setId("c1").setTopic("orders").setGroup("billing").setBuffered(3).build(),
                ConsumerInfo.newBuilder().setId("c2").setTopic("events").build());
        List<JsonNode> all = records(run("--output", "json", "consumer", "list"));
        assertEquals(2, all.size());
        assertEquals("{\"id\":\"c1\",\"topic\":\"orders\",\"group\":\"billing\",\"buffered\":3}", all.get(0).toString());
        assertTrue(all.get(1).get("group").isNull());
        assertEquals(ListConsumersRequest.getDefaultInstance(), admin.requests.get(0));

        List<JsonNode> one = records(run("--output", "json", "consumer", "list", "events"));
        assertEquals(1, one.size());
        assertEquals(ListConsumersRequest.newBuilder().setTopic("events").build(), admin.requests.get(1));
    }

    @Test
    void unavailableIsExit4AndVerboseAddsTheStackTrace() {
        admin.unavailable = true;
        assertError(ExitCodes.UNAVAILABLE, run("cluster", "status"));
        assertError(ExitCodes.UNAVAILABLE, run("topic", "list"));
        assertTrue(admin.requests.size() > 2, "UNAVAILABLE is retried until --deadline");

        Cli.Result verbose = run("--verbose", "consumer", "list");
        assertEquals(ExitCodes.UNAVAILABLE, verbose.exitCode());
        assertTrue(verbose.errLines().size() > 1, verbose.err());
    }

    @Test
    void topLevelHelpListsTheExitCodes() {
        Cli.Result r = run("--help");
        assertEquals(0, r.exitCode());
        for (String line : List.of("5:", "6:", "7:")) {
            assertTrue(r.out().contains(line.charAt(0) + "   ") || r.out().contains(line), r.out());
        }
        assertTrue(r.out().contains("not found"), r.out());
        assertTrue(r.out().contains("removing the leader"), r.out());
        assertTrue(r.out().contains("adding a member twice"), r.out());
        for (String command : List.of("cluster", "topic", "group", "consumer")) {
            assertTrue(r.out().contains(command), r.out());
        }
    }
}
