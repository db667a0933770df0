package io.hourglass.raft;

import io.hourglass.core.config.ConfigException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The shard count a node's data directory was created with, recorded at its first start
 * ({@code <data>/shards}): a start with another count is refused, since the topics' and rooms'
 * shards would change under the data. A directory from before shards holds shard 0's group only.
 */
final class ShardCountFile {
    /** The file in the data directory that records the shard count the node was created with. */
    static final String NAME = "shards";

    private ShardCountFile() {
    }

    /**
     * Records {@code count} for a new directory, or checks it against the recorded one.
     *
     * @param storageDir the Raft storage directory (inside the data directory)
     * @throws ConfigException when the directory was created with another count
     */
    static void check(Path storageDir, int count) throws IOException {
        Path data = storageDir.toAbsolutePath().getParent();
        Path file = data.resolve(NAME);
        if (Files.exists(file)) {
            String recorded = Files.readString(file, StandardCharsets.UTF_8).trim();
            if (!recorded.equals(Integer.toString(count))) {
                throw new ConfigException("the data directory " + data + " was created with cluster.shards=" + recorded
                        + ", this start asks for " + count + "; a cluster's shard count cannot change");
            }
            return;
        }
        boolean existing = Files.isDirectory(storageDir.resolve(RaftHost.groupId(0).getUuid().toString()));
        if (existing && count != 1) {
            throw new ConfigException("the data directory " + data + " holds a cluster created with cluster.shards=1, "
                    + "this start asks for " + count + "; a cluster's shard count cannot change");
        }
        Files.createDirectories(data);
        Files.writeString(file, count + "\n", StandardCharsets.UTF_8);
    }
}
