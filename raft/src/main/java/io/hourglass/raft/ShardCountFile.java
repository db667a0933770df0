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
 * A second line, {@code metadata-group}, says that the cluster was created with a metadata group;
 * a directory without it (created before the metadata group) keeps the metadata in shard 0.
 */
final class ShardCountFile {
    /** The file in the data directory that records the shard count the node was created with. */
    static final String NAME = "shards";
    /** The line that records a metadata group. */
    private static final String META_LINE = "metadata-group";

    private ShardCountFile() {
    }

    /**
     * Records {@code count} for a new directory, or checks it against the recorded one.
     *
     * @param storageDir the Raft storage directory (inside the data directory)
     * @throws ConfigException when the directory was created with another count
     */
    static void check(Path storageDir, int count, boolean metadataGroup) throws IOException {
        Path data = storageDir.toAbsolutePath().getParent();
        Path file = data.resolve(NAME);
        if (Files.exists(file)) {
            String recorded = Files.readString(file, StandardCharsets.UTF_8).strip().lines().findFirst().orElse("").trim();
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
        Files.writeString(file, count + "\n" + (metadataGroup ? META_LINE + "\n" : ""), StandardCharsets.UTF_8);
    }

    /**
     * Whether the node runs a metadata group: as recorded for a directory that has the file; never
     * for a directory from before shards; else as {@code wanted} ({@code cluster.metadataGroup}).
     */
    static boolean metadataGroup(Path storageDir, boolean wanted) throws IOException {
        Path data = storageDir.toAbsolutePath().getParent();
        Path file = data.resolve(NAME);
        if (Files.exists(file)) {
            return Files.readString(file, StandardCharsets.UTF_8).lines().anyMatch(l -> l.trim().equals(META_LINE));
        }
        return wanted && !Files.isDirectory(storageDir.resolve(RaftHost.groupId(0).getUuid().toString()));
    }

    /** Whether a Raft storage directory holds any group yet (a node that was added before). */
    static boolean hasGroups(Path storageDir) throws IOException {
        if (!Files.isDirectory(storageDir)) {
            return false;
        }
        try (var entries = Files.list(storageDir)) {
            return entries.anyMatch(Files::isDirectory);
        }
    }
}
