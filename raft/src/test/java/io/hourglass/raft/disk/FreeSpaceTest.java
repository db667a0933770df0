package io.hourglass.raft.disk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(10)
final class FreeSpaceTest {
    /** More than any disk here has free. */
    private static final long EXABYTE = 1L << 60;

    @TempDir
    Path dir;

    @Test
    void enoughSpaceIsNoShortageAndZeroChecksNothing() throws IOException {
        assertNull(new FreeSpace(List.of(dir), 1).shortage());
        assertNull(new FreeSpace(List.of(dir), 0).shortage());
    }

    @Test
    void aShortageNamesTheDirectoryItsFreeSpaceAndTheMinimum() throws IOException {
        FreeSpace space = new FreeSpace(List.of(dir.resolve("data/ratis"), dir.resolve("data/db")), EXABYTE);
        String shortage = space.shortage();
        assertTrue(shortage.startsWith("the disk is full: the data directory " + dir.resolve("data/ratis") + " has "),
                shortage);
        assertTrue(shortage.contains("MiB free of") && shortage.contains("below node.minFreeDiskMb"), shortage);
        assertTrue(space.lastFree() > 0, "read from the nearest directory that exists");
        DiskFullException e = assertThrows(DiskFullException.class, space::requireAtStart);
        assertTrue(e.getMessage().startsWith("not starting: the disk is full: the data directory"), e.getMessage());
        assertEquals(70, DiskFullException.EXIT_STATUS);
    }

    @Test
    void aFailureIsExplainedAsAFullDiskWhenItSaysENOSPCOrSpaceIsShort() {
        FreeSpace roomy = new FreeSpace(List.of(dir), 1);
        Throwable enospc = new UncheckedIOException(new IOException("No space left on device"));
        assertTrue(roomy.explain(enospc).startsWith("; the disk is full: the data directory " + dir), roomy.explain(enospc));
        assertEquals("", roomy.explain(new IOException("Input/output error")));
        FreeSpace tight = new FreeSpace(List.of(dir), EXABYTE);
        assertTrue(tight.explain(new IOException("Input/output error")).startsWith("; the disk is full"));
    }
}
