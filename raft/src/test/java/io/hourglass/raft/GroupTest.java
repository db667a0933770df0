package io.hourglass.raft;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * A test of a real {@link TestGroup} under its own temporary directory: a subclass sets
 * {@link #group} (nodes under {@link #dir}), and every node still open is closed after each test.
 */
abstract class GroupTest {
    @TempDir
    Path dir;
    TestGroup group;

    @AfterEach
    void closeGroup() throws IOException {
        if (group != null) {
            group.close();
        }
    }
}
