package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hourglass.core.config.ConfigException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a data directory records about its groups: the shard count, and whether it has a metadata group. */
class ShardCountFileTest {
    @TempDir
    Path data;

    private Path storage() {
        return data.resolve("ratis");
    }

    @Test
    void aNewDirectoryTakesTheSettingAndRecordsIt() throws Exception {
        assertTrue(ShardCountFile.metadataGroup(storage(), true));
        assertFalse(ShardCountFile.metadataGroup(storage(), false));
        ShardCountFile.check(storage(), 4, true);
        assertEquals("4\nmetadata-group\n", Files.readString(data.resolve("shards"), StandardCharsets.UTF_8));
        assertTrue(ShardCountFile.metadataGroup(storage(), false), "recorded: the setting no longer decides");
        ShardCountFile.check(storage(), 4, true); // the same start again is fine
        ConfigException e = assertThrows(ConfigException.class, () -> ShardCountFile.check(storage(), 2, true));
        assertTrue(e.getMessage().contains("cluster.shards=4"), e.getMessage());
    }

    @Test
    void aDirectoryRecordedWithoutTheLineHasNoMetadataGroup() throws Exception {
        Files.writeString(data.resolve("shards"), "3\n", StandardCharsets.UTF_8);
        assertFalse(ShardCountFile.metadataGroup(storage(), true));
        ShardCountFile.check(storage(), 3, false);
        assertEquals("3\n", Files.readString(data.resolve("shards"), StandardCharsets.UTF_8));
    }

    @Test
    void aDirectoryFromBeforeShardsHasNoMetadataGroup() throws Exception {
        Files.createDirectories(storage().resolve(RaftHost.groupId(0).getUuid().toString()));
        assertFalse(ShardCountFile.metadataGroup(storage(), true));
    }

    @Test
    void theMetadataGroupHasAGroupAndDirectoriesOfItsOwn() {
        assertFalse(RaftHost.groupId(RaftHost.METADATA).equals(RaftHost.groupId(0)));
        assertEquals(Path.of("/d/db-meta"), RaftHost.shardDir(Path.of("/d/db"), RaftHost.METADATA));
        assertEquals(Path.of("/d/db"), RaftHost.shardDir(Path.of("/d/db"), 0));
        assertEquals(Path.of("/d/db-2"), RaftHost.shardDir(Path.of("/d/db"), 2));
    }
}
