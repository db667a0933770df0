package io.hourglass.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hourglass.core.config.ConfigException;
import io.hourglass.raft.disk.CorruptRaftLogException;
import io.hourglass.raft.disk.DiskFullException;
import org.junit.jupiter.api.Test;

/** {@code hourglass-server}'s exit status for a start that failed: what a supervisor acts on. */
class MainExitStatusTest {
    @Test
    void aCorruptLogIs65AFullDiskIs70AConfigErrorIs2AndAnythingElse1() {
        assertEquals(65, Main.exitStatus(new CorruptRaftLogException("the Raft log is corrupt: …")));
        assertEquals(70, Main.exitStatus(new DiskFullException("not starting: the disk is full: …")));
        assertEquals(Main.STORE_FAILED_EXIT, Main.exitStatus(new DiskFullException("…")), "the status of a store failure");
        assertEquals(2, Main.exitStatus(new ConfigException("raft.port must be a number")));
        assertEquals(1, Main.exitStatus(new IllegalStateException("port in use")));
    }
}
