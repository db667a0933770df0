package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hourglass.testing.TestPorts;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link TcpProbe} against real sockets on loopback: one listening, one closed port. */
class TcpProbeTest {
    @Test
    void aListeningPortAcceptsAndAClosedOneRefuses() throws Exception {
        int closed = TestPorts.next();
        try (ServerSocket open = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            String up = "127.0.0.1:" + open.getLocalPort();
            String down = "127.0.0.1:" + closed;
            assertEquals(TcpProbe.ACCEPTED, TcpProbe.connect(up, 500));
            assertEquals(TcpProbe.REFUSED, TcpProbe.connect(down, 500));
            assertEquals(1, TcpProbe.accepting(List.of(up, down), 2, 500));
            assertEquals(0, TcpProbe.accepting(List.of(down, "no-port"), 1, 500));
            assertEquals(2, TcpProbe.accepting(List.of(up, up), 2, 500));
        }
    }
}
