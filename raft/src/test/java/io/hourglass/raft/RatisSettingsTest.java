package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hourglass.core.config.Settings;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.Test;

/** What reaches Ratis of the settings that are ours to choose rather than Ratis' defaults. */
class RatisSettingsTest {
    private static long appendWaitMs(Map<String, String> settings) {
        RaftConfig config = RaftConfig.from(new Settings(settings), Path.of("data"), 7070);
        return RaftServerConfigKeys.Log.Appender.waitTimeMin(RatisSettings.properties(config, 1 << 20))
                .toLong(TimeUnit.MILLISECONDS);
    }

    @Test
    void theLeaderWaitsFiveMillisecondsBetweenAppendsToAFollowerNotRatisTen() {
        assertEquals(5, appendWaitMs(Map.of()));
        assertEquals(0, appendWaitMs(Map.of("raft.appendWaitMin", "0ms")));
        assertEquals(20, appendWaitMs(Map.of("raft.appendWaitMin", "20ms")));
    }
}
