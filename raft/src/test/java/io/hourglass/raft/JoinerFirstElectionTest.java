package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hourglass.core.config.Settings;
import io.hourglass.testing.TestPorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node that joins with an empty directory waits long before its divisions' first candidacy, so
 * that none stands for election (and is told to shut down) between the cluster creating its group
 * and the leader adding it; a node that was added before, or a founding one, uses the normal timeouts.
 */
class JoinerFirstElectionTest {
    @TempDir
    Path dir;

    private long firstElectionMinMs(Path home, boolean join) throws Exception {
        int port = TestPorts.next();
        RaftConfig config = RaftConfig.from(new Settings(Map.of("node.id", "j1", "raft.port", Integer.toString(port),
                "cluster.join", Boolean.toString(join), "raft.electionTimeoutMin", "1s", "raft.electionTimeoutMax", "2s")),
                home, 7070);
        try (RaftHost host = new RaftHost(config, "127.0.0.1", 7070, Clock.systemUTC(), 1 << 20, 1, false)) {
            return RaftServerConfigKeys.Rpc.firstElectionTimeoutMin(host.properties).toLong(TimeUnit.MILLISECONDS);
        }
    }

    @Test
    void onlyAFreshJoinerDelaysItsFirstElection() throws Exception {
        assertEquals(RatisSettings.JOINER_FIRST_ELECTION_MS, firstElectionMinMs(dir.resolve("fresh"), true));
        assertEquals(1_000, firstElectionMinMs(dir.resolve("founder"), false));
        Path added = dir.resolve("added");
        Files.createDirectories(added.resolve("ratis").resolve(RaftHost.groupId(0).getUuid().toString()));
        assertEquals(1_000, firstElectionMinMs(added, true), "a joiner restarted after it was added");
    }
}
