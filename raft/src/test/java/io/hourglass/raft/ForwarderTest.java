package io.hourglass.raft;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link Forwarder} against an RPC that behaves as Ratis' unordered client stream does after a
 * "not ready" or "not leader" answer: closed, every send failing with {@link AlreadyClosedException}
 * until the connection is made anew. (The forwarder's path through real Ratis servers is covered by
 * the failover tests; this pins down the pause it takes on a closed stream.)
 */
@Timeout(30)
class ForwarderTest {
    private static final RaftPeerId SELF = RaftPeerId.valueOf("n1");
    private static final RaftPeerId LEADER = RaftPeerId.valueOf("n2");

    @Test
    void sendsOnAClosedStreamAreRetriedSoonNotAfterDoublingPauses() throws Exception {
        // Five sends fail on a closed stream, then one succeeds. With the pause doubling from 10 ms
        // (10 + 20 + 40 + 80 + 160) the proposal could not be done before 310 ms; at 10 ms each, ~50 ms.
        ClosedThenOpen rpc = new ClosedThenOpen(5);
        try (Forwarder f = new Forwarder("n1", rpc, RaftNode.GROUP_ID, SELF, () -> LEADER,
                () -> List.of(RaftPeer.newBuilder().setId(SELF).build(), RaftPeer.newBuilder().setId(LEADER).build()),
                r -> CompletableFuture.failedFuture(new IOException("not the leader")),
                Duration.ofSeconds(1), Duration.ofSeconds(10))) {
            long start = System.nanoTime();
            RaftClientReply reply = f.forward(Message.valueOf("publish")).get(10, TimeUnit.SECONDS);
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(reply.isSuccess());
            assertTrue(rpc.sends.get() == 6, "sent " + rpc.sends.get() + " times");
            assertTrue(ms < 250, "done after " + ms + " ms");
            assertTrue(rpc.resets.get() >= 1, "the connection was made anew");
        }
    }

    /** Fails the first {@code closed} sends as a closed stream does; answers success after that. */
    private static final class ClosedThenOpen implements RaftClientRpc {
        private final int closed;
        final AtomicInteger sends = new AtomicInteger();
        final AtomicInteger resets = new AtomicInteger();

        ClosedThenOpen(int closed) {
            this.closed = closed;
        }

        @Override
        public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
            if (sends.incrementAndGet() <= closed) {
                return CompletableFuture.failedFuture(new AlreadyClosedException("n1->n2: the stream is closed."));
            }
            return CompletableFuture.completedFuture(RaftClientReply.newBuilder().setRequest(request).setSuccess().build());
        }

        @Override
        public RaftClientReply sendRequest(RaftClientRequest request) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean handleException(RaftPeerId serverId, Throwable t, boolean reconnect) {
            if (reconnect) {
                resets.incrementAndGet();
            }
            return true;
        }

        @Override
        public void addRaftPeers(java.util.Collection<RaftPeer> peers) {
        }

        @Override
        public void close() {
        }
    }
}
