package io.hourglass.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The node's lifecycle: started in push order, closed in reverse, whatever fails on the way. */
@Timeout(10)
class ComponentStackTest {
    private final List<String> events = new ArrayList<>();
    private final ComponentStack stack = new ComponentStack("n1");

    private void push(String name) throws IOException {
        stack.push(name, () -> events.add("start " + name), () -> events.add("close " + name));
    }

    @Test
    void startsInOrderAndClosesInReverse() throws IOException {
        stack.push("store", () -> events.add("close store"));
        push("raft");
        push("grpc");
        stack.close();
        assertEquals(List.of("start raft", "start grpc", "close grpc", "close raft", "close store"), events);
    }

    @Test
    void aStartThatFailsHalfWayClosesItAndEverythingBefore() throws IOException {
        push("store");
        push("raft");
        IOException failure = assertThrows(IOException.class, () -> stack.push("grpc", () -> {
            events.add("start grpc");
            throw new IOException("port in use");
        }, () -> events.add("close grpc")));
        assertEquals("port in use", failure.getMessage());
        stack.close();
        assertEquals(List.of("start store", "start raft", "start grpc", "close grpc", "close raft", "close store"), events);
    }

    @Test
    void aCloseThatFailsDoesNotStopTheOthersAndASecondCloseClosesNothing() throws IOException {
        push("store");
        stack.push("raft", () -> events.add("start raft"), () -> {
            events.add("close raft");
            throw new IllegalStateException("boom");
        });
        stack.push("grpc", () -> events.add("start grpc"), () -> {
            events.add("close grpc");
            throw new IOException("stuck");
        });
        stack.close();
        stack.close();
        assertEquals(List.of("start store", "start raft", "start grpc", "close grpc", "close raft", "close store"), events);
        assertEquals(0, stack.size());
    }
}
