package io.hourglass.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hourglass.api.v1.MemberStatus;
import io.hourglass.api.v1.NodeInfo;
import io.hourglass.client.HourglassClient;
import io.hourglass.server.testing.TestCluster;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench latency --transfer-every}: the leadership moves while the bench publishes, every
 * message is still delivered, and the record counts the moves.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchTransferTest {
    @Test
    void aLatencyBenchMovesTheLeadershipMeanwhileAndLosesNothing(@TempDir Path dir) throws Exception {
        try (TestCluster cluster = TestCluster.start(dir, 3, Map.of());
             HourglassClient admin = HourglassClient.builder().servers(cluster.targetList()).build()) {
            String before = admin.admin().clusterStatus().getLeaderId();
            Cli.Result r = Cli.runWith(ClientFactory.grpc(), "", "--servers", cluster.targets(), "--deadline", "20s",
                    "bench", "latency", "--rate", "200", "--duration", "7s", "--size", "64", "--transfer-every", "2s");

            assertEquals(0, r.exitCode(), r.err() + "\n" + cluster.describe());
            JsonNode record = new ObjectMapper().readTree(r.outLines().get(0));
            assertEquals(0, record.get("errors").asLong(), record.toString());
            assertEquals(1400, record.get("messages").asLong(), "every message delivered: " + record);
            assertEquals(0, record.get("transferFailures").asLong(), r.err());
            assertTrue(record.get("transfers").asLong() >= 2, "a move every 2 s over 7 s: " + record);
            assertTrue(record.has("transferMaxMs"), record.toString());
            assertTrue(r.err().contains("leadership " + before + " -> "), "each move is a progress line: " + r.err());
            String after = admin.admin().clusterStatus().getLeaderId();
            assertNotEquals("", after);
        }
    }

    @Test
    void theNextMemberIsTheOneAfterTheLeaderInIdOrderAmongThoseUp() {
        List<MemberStatus> members = List.of(member("n2", true), member("n1", true), member("n3", false));
        assertEquals("n2", BenchTransfers.next("n1", members));
        assertEquals("n1", BenchTransfers.next("n2", members), "n3 is down: wraps around to n1");
        assertThrows(IllegalStateException.class, () -> BenchTransfers.next("n1", List.of(member("n1", true))));
    }

    @Test
    void transferEveryGoesOnlyWithTimedModes() {
        Cli.Result r = Cli.runWith(ClientFactory.grpc(), "", "--servers", "127.0.0.1:1", "bench", "publish",
                "--transfer-every", "1s");
        assertEquals(2, r.exitCode(), r.err());
        assertTrue(r.err().contains("--transfer-every"), r.err());
    }

    private static MemberStatus member(String id, boolean up) {
        return MemberStatus.newBuilder().setNode(NodeInfo.newBuilder().setId(id).setShard(0)).setUp(up).build();
    }
}
